/* dlopens a shared library built from smoke.cpp and runs pk_smoke_main(). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s libsmoke.so\n", argv[0]); return 2; }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
  int (*run)(void) = (int (*)(void))dlsym(lib, "pk_smoke_main");
  if (!run) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 2; }
  return run();
}
