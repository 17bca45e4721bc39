// A stand-in for tc netem's delay where the kernel has no sch_netem: two TAP devices joined in user space, each
// frame from the first held DELAY microseconds before it leaves by the second, and frames back passed at once.
// Frames cross as the kernel's segmentation offload leaves them (up to 64 KiB each, checksums deferred), as
// through netem, so the line costs a few system calls per 64 KiB, not per wire-sized frame.
//
// usage: ft-delay-line DELAY_US NODE_TAP HUB_TAP [LIMIT]
//   Makes both TAP devices in the caller's network namespace and prints "ready" once they exist (the caller then
//   moves NODE_TAP into a node's namespace as its link and puts HUB_TAP on the hub's bridge; a TAP device keeps
//   its file descriptor across namespaces). Frames NODE_TAP sends (the node's egress) reach HUB_TAP DELAY_US
//   later, in order; HUB_TAP's reach NODE_TAP at once, so a node-to-node trip gains DELAY_US, as netem on each
//   node's egress adds it. Like netem's limit, at most LIMIT frames (default 100000) wait; more are dropped and
//   counted. Ends on SIGTERM or SIGINT, printing the frames passed and dropped.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

// A frame as a TAP device with IFF_VNET_HDR passes it: the virtio header (whose offload fields the other TAP
// device takes as they are), then up to 64 KiB of IP packet behind its Ethernet header.
#define MAX_FRAME (1 << 17)

struct frame {
  int64_t due_ns;
  size_t size;
  unsigned char* data;
};

// The frames waiting, oldest first: a ring of `capacity` slots.
struct queue {
  struct frame* slots;
  size_t capacity, head, count;
  unsigned long long passed, dropped;
};

static volatile sig_atomic_t stopping = 0;
static void on_signal(int signal_number) { (void)signal_number, stopping = 1; }

static void fail(const char* what) {
  fprintf(stderr, "ft-delay-line: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// A TAP device called `name` in this namespace, without packet information, non-blocking, passing frames with
// their virtio header and accepting TCP's segmentation and checksum offloads.
static int open_tap(const char* name) {
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail("open /dev/net/tun");
  struct ifreq request;
  memset(&request, 0, sizeof request);
  request.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
  if (strlen(name) >= IFNAMSIZ) {
    fprintf(stderr, "ft-delay-line: device name '%s' is longer than %d characters\n", name, IFNAMSIZ - 1);
    exit(2);
  }
  strcpy(request.ifr_name, name);
  if (ioctl(fd, TUNSETIFF, &request) < 0) fail(name);
  if (ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) < 0) fail("TUNSETOFFLOAD");
  return fd;
}

// Reads every frame the node sent, each due `delay_ns` from now; drops what the queue has no room for.
static void take_frames(int fd, struct queue* q, int64_t delay_ns, unsigned char* buffer) {
  for (;;) {
    const ssize_t n = read(fd, buffer, MAX_FRAME);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n < 0) fail("read from the node's device");
    if (q->count == q->capacity) {
      ++q->dropped;
      continue;
    }
    struct frame* f = &q->slots[(q->head + q->count) % q->capacity];
    f->data = malloc((size_t)n);
    if (!f->data) fail("malloc");
    memcpy(f->data, buffer, (size_t)n);
    f->size = (size_t)n;
    f->due_ns = now_ns() + delay_ns;
    ++q->count;
  }
}

// Writes every frame whose time has come to `fd`, oldest first.
static void release_due(int fd, struct queue* q) {
  const int64_t now = now_ns();
  while (q->count > 0 && q->slots[q->head].due_ns <= now) {
    struct frame* f = &q->slots[q->head];
    if (write(fd, f->data, f->size) < 0 && errno != EAGAIN && errno != EIO) fail("write to the hub's device");
    free(f->data);
    q->head = (q->head + 1) % q->capacity;
    --q->count;
    ++q->passed;
  }
}

// Frames back from the hub go to the node at once.
static void pass_back(int from, int to, unsigned char* buffer) {
  for (;;) {
    const ssize_t n = read(from, buffer, MAX_FRAME);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n < 0) fail("read from the hub's device");
    if (write(to, buffer, (size_t)n) < 0 && errno != EAGAIN && errno != EIO) fail("write to the node's device");
  }
}

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: ft-delay-line DELAY_US NODE_TAP HUB_TAP [LIMIT]\n");
    return 2;
  }
  char* end = NULL;
  const long long delay_us = strtoll(argv[1], &end, 10);
  const long long limit = argc == 5 ? strtoll(argv[4], NULL, 10) : 100000;
  if (*end != '\0' || delay_us < 0 || limit <= 0) {
    fprintf(stderr, "ft-delay-line: DELAY_US must be a whole number of microseconds >= 0 and LIMIT > 0\n");
    return 2;
  }
  const int node = open_tap(argv[2]), hub = open_tap(argv[3]);
  struct queue q = {calloc((size_t)limit, sizeof(struct frame)), (size_t)limit, 0, 0, 0, 0};
  unsigned char* buffer = malloc(MAX_FRAME);
  if (!q.slots || !buffer) fail("calloc");
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  printf("ready\n");
  fflush(stdout);
  while (!stopping) {
    struct pollfd fds[2] = {{node, POLLIN, 0}, {hub, POLLIN, 0}};
    struct timespec wait = {1, 0}, *timeout = &wait;
    if (q.count > 0) {
      const int64_t left = q.slots[q.head].due_ns - now_ns();
      wait.tv_sec = left > 0 ? left / 1000000000 : 0;
      wait.tv_nsec = left > 0 ? left % 1000000000 : 0;
    }
    if (ppoll(fds, 2, timeout, NULL) < 0 && errno != EINTR) fail("ppoll");
    if (fds[0].revents & POLLIN) take_frames(node, &q, delay_us * 1000, buffer);
    if (fds[1].revents & POLLIN) pass_back(hub, node, buffer);
    release_due(hub, &q);
  }
  fprintf(stderr, "ft-delay-line: %s -> %s: %llu frames passed after %lld us, %llu dropped\n", argv[2], argv[3],
          q.passed, delay_us, q.dropped);
  return 0;
}
