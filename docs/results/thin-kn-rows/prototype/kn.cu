// Prototype (not shipped): access patterns for C[m,n] = A[m,k] B[k,n], B row-major, m <= 8.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cublas_v2.h>
#define CK(x) do{auto e=(x); if(e){printf("err %d line %d\n",(int)e,__LINE__); exit(1);}}while(0)

__device__ __forceinline__ float4 ldg_stream(const void* p){ float4 v; asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3},[%4];":"=f"(v.x),"=f"(v.y),"=f"(v.z),"=f"(v.w):"l"(p)); return v;}
template<class T> struct W;
template<> struct W<float>{ static constexpr int V=4; __device__ static void widen(float4 r,float*o){o[0]=r.x;o[1]=r.y;o[2]=r.z;o[3]=r.w;} __device__ static float ld(const float*p){return __ldg(p);} };
template<> struct W<__half>{ static constexpr int V=8; __device__ static void widen(float4 r,float*o){ const __half2* h=(const __half2*)&r; for(int i=0;i<4;i++){float2 f=__half22float2(h[i]); o[2*i]=f.x;o[2*i+1]=f.y;}} __device__ static float ld(const __half*p){return __half2float(__ldg(p));} };

// Block 256 threads: CH chunks (16 B) of columns per block, 256/CH slices of k, U rows in flight.
// grid.y = S splits of k: partials to ws[s][m][n] (S>1) else C.
template<class T,int M,int CH,int U>
__global__ void __launch_bounds__(256, 2) kn(const T* A,const T* B,float* out,int m,int n,int k,int kchunk){
  constexpr int V=W<T>::V; constexpr int SL=256/CH;
  __shared__ float part[8][CH][M][V];
  int t=threadIdx.x, ch=t%CH, sl=t/CH, lane=t%32, warp=t/32;
  int col0=(blockIdx.x*CH+ch)*V;
  int k0=blockIdx.y*kchunk, k1=min(k,k0+kchunk);
  float acc[M][V]; for(int i=0;i<M;i++)for(int e=0;e<V;e++)acc[i][e]=0;
  if(col0+V<=n){
    int l=k0+sl;
    for(; l+SL*(U-1)<k1; l+=SL*U){
      float4 r[U];
      #pragma unroll
      for(int u=0;u<U;u++) r[u]=ldg_stream(B+(size_t)(l+SL*u)*n+col0);
      #pragma unroll
      for(int u=0;u<U;u++){ float b[V]; W<T>::widen(r[u],b);
        #pragma unroll
        for(int i=0;i<M;i++){ float a=W<T>::ld(A+(size_t)i*k+l+SL*u);
          #pragma unroll
          for(int e=0;e<V;e++) acc[i][e]=fmaf(a,b[e],acc[i][e]); } }
    }
    for(; l<k1; l+=SL){ float4 r=ldg_stream(B+(size_t)l*n+col0); float b[V]; W<T>::widen(r,b);
      for(int i=0;i<M;i++){ float a=W<T>::ld(A+(size_t)i*k+l); for(int e=0;e<V;e++) acc[i][e]=fmaf(a,b[e],acc[i][e]); } }
  }
  // reduce lanes with same ch in warp
  #pragma unroll
  for(int i=0;i<M;i++) for(int e=0;e<V;e++){ float v=acc[i][e]; for(int s=16;s>=CH;s>>=1) v+=__shfl_xor_sync(~0u,v,s); if(lane<CH) part[warp][ch][i][e]=v; }
  __syncthreads();
  for(int o=t;o<CH*M*V;o+=256){ int c=o/(M*V), i=o/V%M, e=o%V; int col=(blockIdx.x*CH+c)*V+e; if(col<n){ float s=0; for(int w=0;w<8;w++) s+=part[w][c][i][e]; out[((size_t)blockIdx.y*m+i)*n+col]=s; } }
}
__global__ void reduce(const float* ws,float* C,int S,int mn){ for(int x=blockIdx.x*256+threadIdx.x;x<mn;x+=gridDim.x*256){ float s=0; for(int p=0;p<S;p++) s+=ws[(size_t)p*mn+x]; C[x]=s; } }

template<class T> struct Buf{ std::vector<T*> b; };
float median(std::vector<float> v){ std::sort(v.begin(),v.end()); return v[v.size()/2]; }

template<class T,int M,int CH,int U>
float run(const T* A, T** Bs, int nb, float* ws, float* C, int n,int k,int S){
  int kchunk=S>1? ((k+S-1)/S+63)/64*64 : k; int s=(k+kchunk-1)/kchunk;
  dim3 grid((n+CH*W<T>::V-1)/(CH*W<T>::V), s);
  cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1); std::vector<float> ts;
  for(int it=0; it<30; it++){ const T* B=Bs[it%nb];
    cudaEventRecord(e0);
    if(s>1){ kn<T,M,CH,U><<<grid,256>>>(A,B,ws,M,n,k,kchunk); reduce<<<264,256>>>(ws,C,s,M*n);} else kn<T,M,CH,U><<<grid,256>>>(A,B,C,M,n,k,kchunk);
    cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(it>=5) ts.push_back(ms); }
  CK(cudaGetLastError()); return median(ts);
}
template<class T,int M>
void check(const T* A,const T* B,float* C,int n,int k,const char* tag){
  std::vector<T> a(M*(size_t)k), b((size_t)k*n); std::vector<float> c(M*(size_t)n);
  cudaMemcpy(a.data(),A,a.size()*sizeof(T),cudaMemcpyDeviceToHost); cudaMemcpy(b.data(),B,b.size()*sizeof(T),cudaMemcpyDeviceToHost); cudaMemcpy(c.data(),C,c.size()*4,cudaMemcpyDeviceToHost);
  double maxerr=0; for(int j=0;j<n;j+=n/7+1){ for(int i=0;i<M;i++){ double s=0; for(int l=0;l<k;l++) s+=(double)(float)a[i*(size_t)k+l]*(double)(float)b[(size_t)l*n+j]; maxerr=std::max(maxerr,fabs(s-c[i*(size_t)n+j])/ (1e-3+fabs(s)));}}
  if(maxerr>1e-3) printf("  CHECK FAIL %s %g\n",tag,maxerr);
}
__global__ void fill(float* p,size_t n,unsigned seed){ for(size_t i=blockIdx.x*256ull+threadIdx.x;i<n;i+=gridDim.x*256ull){ unsigned x=(unsigned)i*2654435761u^seed; x^=x>>13; x*=0x5bd1e995; x^=x>>15; p[i]=(x&0xffff)/65536.0f-0.5f; } }
__global__ void fillh(__half* p,size_t n,unsigned seed){ for(size_t i=blockIdx.x*256ull+threadIdx.x;i<n;i+=gridDim.x*256ull){ unsigned x=(unsigned)i*2654435761u^seed; x^=x>>13; x*=0x5bd1e995; x^=x>>15; p[i]=__float2half((x&0xffff)/65536.0f-0.5f); } }
template<class T> void fillT(T* p,size_t n,unsigned s);
template<> void fillT<float>(float* p,size_t n,unsigned s){fill<<<1024,256>>>(p,n,s);}
template<> void fillT<__half>(__half* p,size_t n,unsigned s){fillh<<<1024,256>>>(p,n,s);}

template<class T,int M>
void shape(cublasHandle_t h,int k,int n,double copy_gbs){
  size_t bb=(size_t)k*n*sizeof(T); int nb=std::max(2,(int)(400e6/bb)); nb=std::min(nb,8);
  std::vector<T*> Bs(nb); for(auto& p:Bs){CK(cudaMalloc(&p,bb)); fillT<T>(p,(size_t)k*n,(unsigned)(size_t)p);}
  T* A; cudaMalloc(&A,(size_t)M*k*sizeof(T)); fillT<T>(A,(size_t)M*k,7);
  float *C,*ws; cudaMalloc(&C,(size_t)M*n*4); cudaMalloc(&ws,(size_t)64*M*n*4);
  double bytes=(double)bb+(double)M*k*sizeof(T)+M*(double)n*4;
  // cuBLAS
  float one=1,zero=0; std::vector<float> ts; cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  T* Cb; cudaMalloc(&Cb,(size_t)M*n*sizeof(T));
  for(int it=0;it<30;it++){ cudaEventRecord(e0);
    if(sizeof(T)==4) cublasSgemm(h,CUBLAS_OP_N,CUBLAS_OP_N,n,M,k,&one,(const float*)Bs[it%nb],n,(const float*)A,k,&zero,(float*)Cb,n);
    else cublasGemmEx(h,CUBLAS_OP_N,CUBLAS_OP_N,n,M,k,&one,Bs[it%nb],CUDA_R_16F,n,A,CUDA_R_16F,k,&zero,Cb,CUDA_R_16F,n,CUBLAS_COMPUTE_32F,CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(it>=5) ts.push_back(ms);}
  float tb=median(ts);
  printf("%s m=%d k=%d n=%d cublas %.1f us %.1f%%\n", sizeof(T)==4?"f32":"f16", M,k,n, tb*1e3, bytes/tb/1e6/copy_gbs*100);
  auto rep=[&](const char* tag,int S,float t){ printf("  %-12s S=%2d %7.1f us %5.1f%% ratio %.3f\n",tag,S,t*1e3,bytes/t/1e6/copy_gbs*100,tb/t); };
  #define TRY(CH,U,S) if constexpr (8*CH*M*W<T>::V*4 <= 48*1024) { float t=run<T,M,CH,U>(A,Bs.data(),nb,ws,C,n,k,S); char tg[32]; snprintf(tg,32,"ch%d u%d",CH,U); rep(tg,S,t); check<T,M>(A,Bs[(30-1)%nb],C,n,k,tg);}
  TRY(4,8,1) TRY(4,16,1) TRY(8,8,1) TRY(8,16,1) TRY(16,8,1) TRY(32,8,1)
  int cols32=(n+32*W<T>::V-1)/(32*W<T>::V); int S32=std::max(1,(264*2+cols32-1)/cols32);
  int cols8=(n+8*W<T>::V-1)/(8*W<T>::V); int S8=std::max(1,(264*2+cols8-1)/cols8);
  int cols16=(n+16*W<T>::V-1)/(16*W<T>::V); int S16=std::max(1,(264*2+cols16-1)/cols16);
  TRY(32,8,S32) TRY(16,8,S16) TRY(8,8,S8) TRY(8,16,S8) TRY(32,4,S32*2)
  for(auto p:Bs) cudaFree(p); cudaFree(A); cudaFree(C); cudaFree(ws); cudaFree(Cb);
}
int main(){
  cublasHandle_t h; cublasCreate(&h);
  // copy bandwidth
  size_t sz=1ull<<30; char *x,*y; cudaMalloc(&x,sz); cudaMalloc(&y,sz); std::vector<float> ts; cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for(int i=0;i<20;i++){cudaEventRecord(e0); cudaMemcpy(y,x,sz,cudaMemcpyDeviceToDevice); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms,e0,e1); if(i>=3) ts.push_back(ms);}
  double copy=2.0*sz/median(ts)/1e6; printf("copy %.0f GB/s\n",copy); cudaFree(x); cudaFree(y);
  int shapes[][2]={{4096,4096},{4096,11008},{4096,14336},{14336,4096},{8192,8192},{8192,28672},{28672,8192},{8192,57344}};
  for(auto& s:shapes){ shape<float,1>(h,s[0],s[1],copy); shape<float,8>(h,s[0],s[1],copy); }
  for(auto& s:shapes){ shape<__half,1>(h,s[0],s[1],copy); shape<__half,8>(h,s[0],s[1],copy); }
}
