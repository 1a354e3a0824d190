/*
 * podvirt/pause: the process that holds a pod sandbox's namespaces for containerd's CRI on the
 * real-node testbed lane. It sleeps until a signal comes, reaps any child it inherits (it is PID 1
 * of the pod's PID namespace when the pod shares one), and exits 0 on SIGTERM or SIGINT.
 * Built static by scripts/images and packaged FROM scratch (Dockerfile here).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig) {
  (void)sig;
  stop = 1;
}

/* Nothing to do in the handler: the wait below reaps once pause() returns. */
static void on_child(int sig) { (void)sig; }

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    puts("podvirt-pause 1");
    return 0;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0) {
    perror("pause: sigaction");
    return 1;
  }
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  if (sigaction(SIGCHLD, &sa, NULL) != 0) {
    perror("pause: sigaction");
    return 1;
  }
  /* The signals stay blocked except inside sigsuspend, so none comes between the test of
   * `stop` and the wait (pause() would sleep for ever on a SIGTERM that came just before it). */
  sigset_t block, during;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &block, &during) != 0) {
    perror("pause: sigprocmask");
    return 1;
  }
  while (!stop) {
    sigsuspend(&during);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
  }
  return 0;
}
