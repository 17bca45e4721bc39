// Keeps a launcher's listening sockets on this machine: preloaded into mpirun (LD_PRELOAD), a bind() to every
// address (0.0.0.0 or ::) becomes a bind() to loopback (127.0.0.1 or ::1). Open MPI binds its out-of-band
// listener to every interface whatever oob_tcp_if_include says; when all ranks are local (jobs/workstation/
// run.sh, make demo) nothing needs it beyond loopback. Any other bind() passes through unchanged.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_function)(int, const struct sockaddr*, socklen_t);

static bind_function real_bind(void) {
  static bind_function real;
  if (!real) real = (bind_function)dlsym(RTLD_NEXT, "bind");
  return real;
}

int bind(int fd, const struct sockaddr* address, socklen_t length) {
  const bind_function next = real_bind();
  if (!next) {
    errno = ENOSYS;
    return -1;
  }
  if (address && address->sa_family == AF_INET && length >= (socklen_t)sizeof(struct sockaddr_in)) {
    struct sockaddr_in v4;
    memcpy(&v4, address, sizeof v4);
    if (v4.sin_addr.s_addr == htonl(INADDR_ANY)) {
      v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      return next(fd, (const struct sockaddr*)&v4, sizeof v4);
    }
  } else if (address && address->sa_family == AF_INET6 && length >= (socklen_t)sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 v6;
    memcpy(&v6, address, sizeof v6);
    if (IN6_IS_ADDR_UNSPECIFIED(&v6.sin6_addr)) {
      v6.sin6_addr = in6addr_loopback;
      return next(fd, (const struct sockaddr*)&v6, sizeof v6);
    }
  }
  return next(fd, address, length);
}
