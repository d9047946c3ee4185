// What NVML costs on its own (a benchmark aid, not shipped, not a test): makes the
// agent snapshot's NVML calls (init, the handle of GPU 0, the 25 queries the
// fingerprint and the telemetry sample ask, twice, then nvmlShutdown and dlclose)
// and prints wall, CPU and RSS after each, so that `gpukb agent --once` can be set
// next to the floor any NVML client pays. Prototypes are declared here (no nvml.h).
//   cc -O2 -o /tmp/nvml-cost tests/bench/nvml-cost.c -ldl
//   /tmp/nvml-cost -1 1 x      (-1: nvmlInit_v2, else nvmlInitWithFlags(N); 1: ask the CUDA
//                               version; a 3rd argument prints RSS by mapping)
//   CUDA_FIRST=1 /tmp/nvml-cost -1 1   (dlopen libcuda before NVML)
//   /usr/bin/time -f '%e s %U u %S s %M KB' /tmp/nvml-cost -1 1 >/dev/null
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include <sys/resource.h>
typedef unsigned long long ull;
static void *L; static void *dev;
static double t0;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static double cpu(void){struct rusage r;getrusage(RUSAGE_SELF,&r);return (r.ru_utime.tv_sec+r.ru_stime.tv_sec)*1e3+(r.ru_utime.tv_usec+r.ru_stime.tv_usec)/1e3;}
static void st(const char*what){
  FILE*f=fopen("/proc/self/status","r");char l[256];long rss=0,an=0,fi=0,hwm=0,th=0;
  while(fgets(l,sizeof l,f)){sscanf(l,"VmRSS: %ld",&rss);sscanf(l,"VmHWM: %ld",&hwm);sscanf(l,"RssAnon: %ld",&an);sscanf(l,"RssFile: %ld",&fi);sscanf(l,"Threads: %ld",&th);}
  fclose(f);
  static double lt=0, lc=0; double n=now(), c=cpu();
  printf("%-40s %7.2f ms wall %7.2f ms cpu  RSS %6.1f MB (anon %5.1f file %5.1f) peak %5.1f thr %ld\n",what,n-lt,c-lc,rss/1000.0,an/1000.0,fi/1000.0,hwm/1000.0,th);
  lt=n; lc=c;
}
static void libs(void){FILE*f=fopen("/proc/self/smaps","r");char l[512],name[400]="";long r; long cursz=0; unsigned long a=0,b;
  while(fgets(l,sizeof l,f)){char perm[8]; int n=0;
    if(sscanf(l,"%lx-%lx %7s %*s %*s %*s %n",&a,&b,perm,&n)==3 && n>0){ if(sscanf(l+n,"%399s",name)!=1) strcpy(name,"[anon]"); strcat(name," "); strcat(name,perm); continue;}
    long sz; if(sscanf(l,"Size: %ld",&sz)==1) cursz=sz; if(sscanf(l,"Rss: %ld",&r)==1 && r>=128) printf("   %6.1f MB of %8.1f MB %s %lx\n",r/1000.0,cursz/1000.0,name,a);}
  fclose(f);}
#define SYM(n) void* n = dlsym(L,#n)
typedef int (*f0)(void); typedef int (*fu)(unsigned); typedef int (*fdp)(void*,void*); typedef int (*fdpp)(void*,void*,void*);
int main(int argc,char**argv){
  int mode=argc>1?atoi(argv[1]):-1; int getcuda=argc>2?atoi(argv[2]):1;
  setvbuf(stdout,NULL,_IONBF,0); t0=now(); st("start");
  if(getenv("CUDA_FIRST")){void*c=dlopen("libcuda.so.1",RTLD_NOW|RTLD_LOCAL); st(c?"dlopen libcuda first":"dlopen libcuda FAILED");}
  L=dlopen("libnvidia-ml.so.1",RTLD_NOW|RTLD_LOCAL); if(!L){printf("dlopen: %s\n",dlerror());return 1;}
  st("dlopen libnvidia-ml");
  int rc = mode<0 ? ((f0)dlsym(L,"nvmlInit_v2"))() : ((fu)dlsym(L,"nvmlInitWithFlags"))((unsigned)mode);
  char b[96]; sprintf(b,"init (mode %d) rc=%d",mode,rc); st(b);
  char s[256]; ((int(*)(char*,unsigned))dlsym(L,"nvmlSystemGetDriverVersion"))(s,80); st("SystemGetDriverVersion");
  if(getcuda){int v=0; ((int(*)(int*))dlsym(L,"nvmlSystemGetCudaDriverVersion_v2"))(&v); sprintf(b,"SystemGetCudaDriverVersion_v2=%d",v); st(b);}
  unsigned n=0; ((int(*)(unsigned*))dlsym(L,"nvmlDeviceGetCount_v2"))(&n); st("DeviceGetCount_v2");
  rc=((int(*)(unsigned,void**))dlsym(L,"nvmlDeviceGetHandleByIndex_v2"))(0,&dev); sprintf(b,"GetHandleByIndex_v2 rc=%d",rc); st(b);
  if(argc>3){printf("-- smaps after init+handle\n"); libs();}
  if(rc!=0){printf("no handle, stop\n"); return 0;}
  for(int pass=0;pass<2;pass++){
  printf("-- pass %d\n",pass);
  unsigned u,u2,u3,u4; int i1,i2; ull x; char big[4096];
#define Q1(name, ...) rc=((int(*)())dlsym(L,#name))(dev, __VA_ARGS__); sprintf(b,"%s rc=%d",#name,rc); st(b);
  Q1(nvmlDeviceGetName, s, 96u)
  Q1(nvmlDeviceGetUUID, s, 96u)
  Q1(nvmlDeviceGetCudaComputeCapability, &i1, &i2)
  Q1(nvmlDeviceGetMemoryInfo, big)
  Q1(nvmlDeviceGetPciInfo_v3, big)
  Q1(nvmlDeviceGetCurrPcieLinkGeneration, &u)
  Q1(nvmlDeviceGetMaxPcieLinkGeneration, &u)
  Q1(nvmlDeviceGetCurrPcieLinkWidth, &u)
  Q1(nvmlDeviceGetMaxPcieLinkWidth, &u)
  Q1(nvmlDeviceGetEccMode, &i1, &i2)
  Q1(nvmlDeviceGetTotalEccErrors, 1, 1, &x)
  Q1(nvmlDeviceGetTotalEccErrors, 0, 1, &x)
  u=0; Q1(nvmlDeviceGetRetiredPages, 1, &u, big)
  Q1(nvmlDeviceGetRetiredPagesPendingStatus, &i1)
  Q1(nvmlDeviceGetMigMode, &u, &u2)
  Q1(nvmlDeviceGetPersistenceMode, &i1)
  Q1(nvmlDeviceGetTemperature, 0, &u)
  Q1(nvmlDeviceGetPowerUsage, &u)
  Q1(nvmlDeviceGetEnforcedPowerLimit, &u)
  Q1(nvmlDeviceGetCurrentClocksThrottleReasons, &x)
  Q1(nvmlDeviceGetRemappedRows, &u, &u2, &u3, &u4)
  Q1(nvmlDeviceGetClockInfo, 1, &u)
  Q1(nvmlDeviceGetClockInfo, 2, &u)
  Q1(nvmlDeviceGetUtilizationRates, big)
  Q1(nvmlDeviceGetPcieReplayCounter, &u)
  u=0; Q1(nvmlDeviceGetComputeRunningProcesses_v3, &u, big)
  }
  ((f0)dlsym(L,"nvmlShutdown"))(); st("nvmlShutdown");
  dlclose(L); st("dlclose");
  malloc_trim(0); st("malloc_trim");
  if(argc>3){printf("-- smaps at end\n"); libs();}
  return 0;
}
