//! Standard output that a closed reader ends quietly.
//!
//! Rust programs ignore SIGPIPE, so `println!` panics ("failed printing to stdout") when the
//! reader of a pipe has gone, as `sgemm-ladder --list | head -1` makes it. [`say!`] writes
//! through [`write()`] instead, which ends the program with the status a shell reports for a
//! program that SIGPIPE ended, without a message: the reader asked for no more.

use std::fmt;
use std::io::{self, Write};
use std::process;

/// Exit status when standard output closes under us: 128 + SIGPIPE (13), what a shell reports
/// for a program that SIGPIPE ended.
pub const STDOUT_CLOSED: i32 = 128 + 13;

/// Exit status of an error (bad arguments, no GPU, I/O), as clap uses for usage errors.
pub const ERROR: u8 = 2;

/// Writes `args` to standard output. A closed pipe ends the program quietly with
/// [`STDOUT_CLOSED`]; any other write error ends it with a message and [`ERROR`].
pub fn write(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if err.kind() == io::ErrorKind::BrokenPipe {
            process::exit(STDOUT_CLOSED);
        }
        error(format_args!(
            "sgemm-ladder: error: writing to standard output: {err}"
        ));
        process::exit(ERROR.into());
    }
}

/// Writes one line to standard error; a closed standard error is ignored (there is nowhere
/// left to say anything).
pub fn error(args: fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "{args}");
}

/// `println!` through [`write()`]: a closed standard output ends the program quietly.
macro_rules! say {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use say;

/// Reports the cases that failed verification (one line on stderr, none if all passed) and
/// returns whether every case passed.
pub fn verification_passed(failed: &[String]) -> bool {
    if !failed.is_empty() {
        error(format_args!(
            "sgemm-ladder: verification FAILED for {}",
            failed.join(", ")
        ));
    }
    failed.is_empty()
}
