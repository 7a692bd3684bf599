/* SPDX-License-Identifier: MIT */
/*
 * Descriptors without a file behind them: pipes, sockets, event, timer and signal descriptors,
 * epoll and inotify instances, memfds, pidfds. The calls that make them are wrapped here so the
 * new descriptors get a record under the name the kernel shows in /proc/self/fd ("pipe:[INODE]",
 * "socket:[INODE]", "anon_inode:[eventfd]"; a memfd as "/memfd:NAME", without the " (deleted)"
 * it always has), flagged LOG_R_PSEUDO; from
 * then on read, write and the rest count on them through the ordinary wrappers (posix.c), so a
 * pipe's bytes are counted like strace shows them, in the writer and in the reader.
 *
 * Naming costs one readlink per new descriptor, in the call that made it (a pipe's two ends share
 * one); the read/write path is unchanged. Sockets also move data with send, recv and their
 * message forms, wrapped here as writes and reads. Descriptors glibc makes for itself with
 * internal calls (popen's pipe, the resolver's sockets) are not seen.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "capture/core.h"

/* A new descriptor fd made at [t0, t1]: recorded under the kernel's name. */
static void note_new(int fd, uint64_t t0, uint64_t t1)
{
	char name[CAP_PATH_MAX];
	if (fd >= 0 && cap_fd_kernel_name(fd, name, sizeof name) == 0)
		cap_note_pseudo_open(fd, -1, name, t0, t1);
}

/* Both ends of a pipe have one name (its inode): one readlink. */
static void note_pipe(const int fds[2], uint64_t t0, uint64_t t1)
{
	char name[CAP_PATH_MAX];
	if (cap_fd_kernel_name(fds[0], name, sizeof name) == 0)
		cap_note_pseudo_open(fds[0], fds[1], name, t0, t1);
}

#define CAP_NEW_FD(call)                                       \
	uint64_t t0 = cap_now();                               \
	int fd = call;                                         \
	uint64_t t1 = cap_now();                               \
	note_new(fd, t0, t1);

CAP_EXPORT int pipe(int fds[2])
{
	if (!cap_active())
		return REAL(pipe)(fds);
	uint64_t t0 = cap_now();
	int r = real.pipe(fds);
	uint64_t t1 = cap_now();
	if (r == 0)
		note_pipe(fds, t0, t1);
	return r;
}

CAP_EXPORT int pipe2(int fds[2], int flags)
{
	if (!cap_active())
		return REAL(pipe2)(fds, flags);
	uint64_t t0 = cap_now();
	int r = real.pipe2(fds, flags);
	uint64_t t1 = cap_now();
	if (r == 0)
		note_pipe(fds, t0, t1);
	return r;
}

CAP_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	if (!cap_active())
		return REAL(socketpair)(domain, type, protocol, fds);
	uint64_t t0 = cap_now();
	int r = real.socketpair(domain, type, protocol, fds);
	uint64_t t1 = cap_now();
	if (r == 0) {
		note_new(fds[0], t0, t1);
		note_new(fds[1], t0, t1);
	}
	return r;
}

CAP_EXPORT int socket(int domain, int type, int protocol)
{
	if (!cap_active())
		return REAL(socket)(domain, type, protocol);
	CAP_NEW_FD(real.socket(domain, type, protocol))
	return fd;
}

CAP_EXPORT int accept(int sfd, struct sockaddr *addr, socklen_t *len)
{
	if (!cap_active())
		return REAL(accept)(sfd, addr, len);
	CAP_NEW_FD(real.accept(sfd, addr, len))
	return fd;
}

CAP_EXPORT int accept4(int sfd, struct sockaddr *addr, socklen_t *len, int flags)
{
	if (!cap_active())
		return REAL(accept4)(sfd, addr, len, flags);
	CAP_NEW_FD(real.accept4(sfd, addr, len, flags))
	return fd;
}

CAP_EXPORT int eventfd(unsigned int initval, int flags)
{
	if (!cap_active())
		return REAL(eventfd)(initval, flags);
	CAP_NEW_FD(real.eventfd(initval, flags))
	return fd;
}

CAP_EXPORT int timerfd_create(int clockid, int flags)
{
	if (!cap_active())
		return REAL(timerfd_create)(clockid, flags);
	CAP_NEW_FD(real.timerfd_create(clockid, flags))
	return fd;
}

/* signalfd(-1, ...) makes a descriptor; signalfd(fd, ...) changes the mask of fd */
CAP_EXPORT int signalfd(int sfd, const sigset_t *mask, int flags)
{
	if (!cap_active() || sfd != -1)
		return REAL(signalfd)(sfd, mask, flags);
	CAP_NEW_FD(real.signalfd(sfd, mask, flags))
	return fd;
}

CAP_EXPORT int epoll_create(int size)
{
	if (!cap_active())
		return REAL(epoll_create)(size);
	CAP_NEW_FD(real.epoll_create(size))
	return fd;
}

CAP_EXPORT int epoll_create1(int flags)
{
	if (!cap_active())
		return REAL(epoll_create1)(flags);
	CAP_NEW_FD(real.epoll_create1(flags))
	return fd;
}

CAP_EXPORT int inotify_init(void)
{
	if (!cap_active())
		return REAL(inotify_init)();
	CAP_NEW_FD(real.inotify_init())
	return fd;
}

CAP_EXPORT int inotify_init1(int flags)
{
	if (!cap_active())
		return REAL(inotify_init1)(flags);
	CAP_NEW_FD(real.inotify_init1(flags))
	return fd;
}

CAP_EXPORT int memfd_create(const char *name, unsigned int flags)
{
	if (!cap_active())
		return REAL(memfd_create)(name, flags);
	CAP_NEW_FD(real.memfd_create(name, flags))
	return fd;
}

CAP_EXPORT int pidfd_open(pid_t pid, unsigned int flags)
{
	if (!cap_active())
		return REAL(pidfd_open)(pid, flags);
	CAP_NEW_FD(real.pidfd_open(pid, flags))
	return fd;
}

/* ---------- sockets' own data calls: a send is a write, a receive a read ---------- */

#define CAP_SOCK_BODY(call, kind, mem)                         \
	uint64_t t0 = cap_now();                               \
	ssize_t r = call;                                      \
	uint64_t t1 = cap_now();                               \
	cap_note_rw_inline(f, kind, -1, r, mem, t0, t1);

static inline uintptr_t msg_base(const struct msghdr *m)
{
	return m && m->msg_iovlen > 0 && m->msg_iov ? (uintptr_t)m->msg_iov[0].iov_base : 0;
}

CAP_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(send)(fd, buf, n, flags);
	CAP_SOCK_BODY(real.send(fd, buf, n, flags), LOG_KIND_WRITE, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(sendto)(fd, buf, n, flags, to, tolen);
	CAP_SOCK_BODY(real.sendto(fd, buf, n, flags, to, tolen), LOG_KIND_WRITE, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(sendmsg)(fd, msg, flags);
	CAP_SOCK_BODY(real.sendmsg(fd, msg, flags), LOG_KIND_WRITE, msg_base(msg))
	return r;
}

CAP_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(recv)(fd, buf, n, flags);
	CAP_SOCK_BODY(real.recv(fd, buf, n, flags), LOG_KIND_READ, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fromlen)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(recvfrom)(fd, buf, n, flags, from, fromlen);
	CAP_SOCK_BODY(real.recvfrom(fd, buf, n, flags, from, fromlen), LOG_KIND_READ, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(recvmsg)(fd, msg, flags);
	CAP_SOCK_BODY(real.recvmsg(fd, msg, flags), LOG_KIND_READ, msg_base(msg))
	return r;
}

/* _FORTIFY_SOURCE forms */
CAP_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__recv_chk)(fd, buf, n, buflen, flags);
	CAP_SOCK_BODY(real.__recv_chk(fd, buf, n, buflen, flags), LOG_KIND_READ, (uintptr_t)buf)
	return r;
}

CAP_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *from,
				  socklen_t *fromlen)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(__recvfrom_chk)(fd, buf, n, buflen, flags, from, fromlen);
	CAP_SOCK_BODY(real.__recvfrom_chk(fd, buf, n, buflen, flags, from, fromlen), LOG_KIND_READ, (uintptr_t)buf)
	return r;
}

/* sendmmsg/recvmmsg move several messages in one system call: one write or read of their bytes
 * (each message's msg_len, which the kernel fills in). */
static ssize_t mmsg_bytes(const struct mmsghdr *v, int r)
{
	ssize_t b = 0;
	for (int i = 0; i < r; i++)
		b += (ssize_t)v[i].msg_len;
	return r < 0 ? -1 : b;
}

CAP_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(sendmmsg)(fd, v, n, flags);
	uint64_t t0 = cap_now();
	int r = real.sendmmsg(fd, v, n, flags);
	uint64_t t1 = cap_now();
	cap_note_rw(f, LOG_KIND_WRITE, -1, mmsg_bytes(v, r), n && v ? msg_base(&v[0].msg_hdr) : 0, t0, t1);
	return r;
}

CAP_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *timeout)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return REAL(recvmmsg)(fd, v, n, flags, timeout);
	uint64_t t0 = cap_now();
	int r = real.recvmmsg(fd, v, n, flags, timeout);
	uint64_t t1 = cap_now();
	cap_note_rw(f, LOG_KIND_READ, -1, mmsg_bytes(v, r), n && v ? msg_base(&v[0].msg_hdr) : 0, t0, t1);
	return r;
}
