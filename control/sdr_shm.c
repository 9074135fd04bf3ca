/* SPDX-License-Identifier: BSD-3-Clause */
/* The control plane's shared pieces: status segment, client segments, the attach handshake. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sdr_shm.h"

#define ALIGN64(x) (((x) + 63u) & ~(uint64_t)63u)
#define ALIGN4K(x) (((x) + 4095u) & ~(uint64_t)4095u)

uint64_t
sdr_shm_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t
sdr_shm_age_ns(const volatile uint64_t *stamp)
{
	uint64_t t = __atomic_load_n(stamp, __ATOMIC_ACQUIRE);
	uint64_t now = sdr_shm_mono_ns();

	return now > t ? now - t : 0;
}

int
sdr_shm_path(const char *instance, char *path, size_t len)
{
	if (strchr(instance, '/') != NULL || instance[0] == '\0' ||
	    (size_t)snprintf(path, len, "/sdr-%s", instance) >= len)
		return -1;
	return 0;
}

void
sdr_client_layout(uint32_t kind, uint64_t arena_len, uint32_t queues,
		  struct sdr_client_layout *L)
{
	uint64_t off = ALIGN64(sizeof(struct sdr_client_hdr));

	memset(L, 0, sizeof(*L));
	L->rpc_off = off;
	off += ALIGN64(sizeof(struct sdr_rpc));
	if (kind == SDR_CLIENT_SDK) {
		L->queues = queues < 1 ? 1 : queues > SDR_SHM_MAX_QUEUES ? SDR_SHM_MAX_QUEUES :
			    queues;
		for (uint32_t q = 0; q < L->queues; q++) {
			L->sq_off[q] = off;
			off += ALIGN64(SDR_SPSC_BYTES(SDR_SHM_QUEUE_DEPTH,
						      sizeof(struct sdr_sdk_req)));
			L->cq_off[q] = off;
			off += ALIGN64(SDR_SPSC_BYTES(SDR_SHM_QUEUE_DEPTH,
						      sizeof(struct sdr_sdk_cqe)));
		}
		L->arena_off = ALIGN4K(off);
		L->arena_len = (arena_len < SDR_SHM_ARENA_MAX ? arena_len : SDR_SHM_ARENA_MAX) &
			       ~4095ull;
		off = L->arena_off + L->arena_len;
	}
	L->size = ALIGN4K(off);
}

int
sdr_shm_dp_alive(const struct sdr_shm_status *st)
{
	return st->alive && sdr_shm_age_ns(&st->heartbeat_ns) < 2000000000ull &&
	       (kill(st->dp_pid, 0) == 0 || errno == EPERM);
}

/*
 * Whose status segment a client believes: root's, its own user's, or that of the user
 * SDR_DATAPLANE_USER names (a name or a number). Anyone may create /dev/shm/sdr-NAME while
 * no dataplane runs under that name, and point it at a socket of their own.
 */
static int
owner_trusted(uid_t owner)
{
	const char *u = getenv("SDR_DATAPLANE_USER");
	const struct passwd *pw;
	unsigned long v;
	char *end;

	if (owner == 0 || owner == geteuid())
		return 1;
	if (u == NULL || *u == '\0')
		return 0;
	errno = 0;
	v = strtoul(u, &end, 10);
	if (*end == '\0' && errno == 0 && u[0] >= '0' && u[0] <= '9')
		return v == (unsigned long)owner;
	pw = getpwnam(u);
	return pw != NULL && pw->pw_uid == owner;
}

/* sdr_shm_status_map(), and the segment's owner into *@p owner. */
static const struct sdr_shm_status *
status_map(const char *instance, uid_t *owner, char *err, size_t errlen)
{
	char path[SDR_SHM_NAME_MAX + 8];
	struct sdr_shm_status *st;
	struct stat sb;
	int fd;

	if (sdr_shm_path(instance, path, sizeof(path)) != 0) {
		snprintf(err, errlen, "bad instance name '%s'", instance);
		return NULL;
	}
	fd = shm_open(path, O_RDONLY, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s dataplane instance '%s' (%s: %s)",
			 errno == EACCES ? "not allowed to use" : "no", instance, path,
			 strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof(*st)) {
		snprintf(err, errlen, "instance '%s': not an SDR status segment", instance);
		close(fd);
		return NULL;
	}
	if (!owner_trusted(sb.st_uid)) {
		snprintf(err, errlen, "instance '%s': %s belongs to uid %u, not to root or to you: "
			 "not believed (set SDR_DATAPLANE_USER to the dataplane's user)", instance,
			 path, (unsigned int)sb.st_uid);
		close(fd);
		return NULL;
	}
	*owner = sb.st_uid;
	st = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (st == MAP_FAILED) {
		snprintf(err, errlen, "instance '%s': cannot map: %s", instance, strerror(errno));
		return NULL;
	}
	if (st->magic != SDR_SHM_MAGIC || st->total_size != (uint64_t)sb.st_size) {
		snprintf(err, errlen, "instance '%s': not an SDR status segment", instance);
		munmap(st, (size_t)sb.st_size);
		return NULL;
	}
	if (st->version != SDR_SHM_VERSION || st->hdr_size != sizeof(*st)) {
		snprintf(err, errlen, "instance '%s' speaks control version %u, this program "
			 "speaks %u: use the tools of the same build as the dataplane", instance,
			 st->version, SDR_SHM_VERSION);
		munmap(st, (size_t)sb.st_size);
		return NULL;
	}
	return st;
}

const struct sdr_shm_status *
sdr_shm_status_map(const char *instance, char *err, size_t errlen)
{
	uid_t owner;

	return status_map(instance, &owner, err, errlen);
}

void
sdr_shm_status_unmap(const struct sdr_shm_status *st)
{
	if (st != NULL)
		munmap((void *)(uintptr_t)st, sizeof(*st));
}

int
sdr_shm_read_stats(const struct sdr_shm_status *st, struct sdr_shm_stats *out)
{
	const struct sdr_shm_stats *s = &st->stats;

	for (int tries = 0; tries < 1000; tries++) {
		uint64_t a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE), b;

		if (a & 1) {
			usleep(50);
			continue;
		}
		memcpy(out, (const void *)s, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		b = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (a != b)
			continue;
		/* whatever the counts say, nothing is read past the arrays */
		if (out->nports > SDR_SHM_MAX_PORTS)
			out->nports = SDR_SHM_MAX_PORTS;
		if (out->nconns > SDR_SHM_MAX_CONNS)
			out->nconns = SDR_SHM_MAX_CONNS;
		for (uint32_t i = 0; i < SDR_SHM_MAX_PORTS; i++)
			out->ports[i].name[sizeof(out->ports[i].name) - 1] = '\0';
		for (uint32_t i = 0; i < SDR_SHM_MAX_CONNS; i++) {
			out->conns[i].name[sizeof(out->conns[i].name) - 1] = '\0';
			out->conns[i].scheme[sizeof(out->conns[i].scheme) - 1] = '\0';
		}
		return 0;
	}
	return -1;
}

/* ---- the client's side ---- */

/* The welcome and the segment's descriptor. @return the fd, or -1 (err says why). */
static int
recv_welcome(int fd, struct sdr_welcome *w, char *err, size_t errlen)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = w, .iov_len = sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmsghdr *cm;
	int sfd = -1;
	ssize_t n;

	if (poll(&p, 1, 5000) != 1) {
		snprintf(err, errlen, "the dataplane did not answer the hello");
		return -1;
	}
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&sfd, CMSG_DATA(cm), sizeof(int));
	if (n != (ssize_t)sizeof(*w) || w->magic != SDR_CLIENT_MAGIC) {
		snprintf(err, errlen, "the dataplane sent no welcome (%s)",
			 n < 0 ? strerror(errno) : "closed");
		goto fail;
	}
	w->msg[sizeof(w->msg) - 1] = '\0';
	if (w->rc != 0) {
		snprintf(err, errlen, "%s", w->msg);
		goto fail;
	}
	if (sfd < 0) {
		snprintf(err, errlen, "the dataplane sent no segment");
		goto fail;
	}
	return sfd;
fail:
	if (sfd >= 0)
		close(sfd);
	return -1;
}

int
sdr_client_attach(const char *instance, uint32_t kind, struct sdr_client *c, char *err,
		  size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sdr_hello h = { .magic = SDR_CLIENT_MAGIC, .version = SDR_SHM_VERSION };
	struct sdr_welcome w = { 0 };
	const struct sdr_client_hdr *ch;
	struct ucred cred = { 0 };
	socklen_t credlen = sizeof(cred);
	struct stat sb;
	const char *path;
	uid_t owner;
	int sfd;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	snprintf(c->instance, sizeof(c->instance), "%s", instance);
	c->st = status_map(instance, &owner, err, errlen);
	if (c->st == NULL)
		return -1;
	if (!sdr_shm_dp_alive(c->st)) {
		snprintf(err, errlen, "instance '%s': the dataplane (pid %d) is not running",
			 instance, c->st->dp_pid);
		goto fail;
	}
	path = kind == SDR_CLIENT_ADMIN ? c->st->admin_sock : c->st->sdk_sock;
	if (strnlen(path, SDR_SHM_SOCK_MAX) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "instance '%s': bad socket path", instance);
		goto fail;
	}
	memcpy(sa.sun_path, path, strnlen(path, SDR_SHM_SOCK_MAX));
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, errlen, "instance '%s': cannot connect to %s: %s%s", instance, sa.sun_path,
			 strerror(errno), errno == EACCES ? (kind == SDR_CLIENT_ADMIN ?
			 " (the admin channel is the dataplane's user's only)" :
			 " (applications need the dataplane's [dataplane] control_group)") : "");
		goto fail;
	}
	/* the socket's server is the process the segment names, of the segment's user */
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) != 0 ||
	    cred.pid != c->st->dp_pid || cred.uid != owner) {
		snprintf(err, errlen, "instance '%s': %s is served by pid %d of uid %u, not by the "
			 "dataplane the status segment names (pid %d of uid %u): not believed",
			 instance, sa.sun_path, (int)cred.pid, (unsigned int)cred.uid,
			 c->st->dp_pid, (unsigned int)owner);
		goto fail;
	}
	/* a dataplane with no slot free answers at once and hangs up: the hello may find the
	 * socket closed, the refusal is still there to read */
	if (send(c->fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		int e = errno;

		if (recv_welcome(c->fd, &w, err, errlen) < 0 && w.magic != SDR_CLIENT_MAGIC)
			snprintf(err, errlen, "instance '%s': %s", instance, strerror(e));
		goto fail;
	}
	sfd = recv_welcome(c->fd, &w, err, errlen);
	if (sfd < 0)
		goto fail;
	sdr_client_layout(w.kind, w.arena_len, w.queues, &c->L);
	/* the layout is ours, from bounded values: the welcome must say the same */
	if (w.version != SDR_SHM_VERSION || w.kind != kind || w.size != c->L.size ||
	    (kind == SDR_CLIENT_SDK && w.arena_len != c->L.arena_len) ||
	    fstat(sfd, &sb) != 0 || (uint64_t)sb.st_size != w.size) {
		snprintf(err, errlen, "instance '%s': the segment is not what the welcome said",
			 instance);
		close(sfd);
		goto fail;
	}
	c->seg = mmap(NULL, w.size, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	close(sfd);
	if (c->seg == MAP_FAILED) {
		c->seg = NULL;
		snprintf(err, errlen, "instance '%s': cannot map the client segment: %s", instance,
			 strerror(errno));
		goto fail;
	}
	c->seg_len = w.size;
	c->rep = malloc(sizeof(*c->rep));
	if (c->rep == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	ch = (const struct sdr_client_hdr *)c->seg;
	if (ch->magic != SDR_CLIENT_MAGIC || ch->slot != w.slot) {
		snprintf(err, errlen, "instance '%s': a client segment without its header", instance);
		goto fail;
	}
	c->kind = kind;
	c->slot = w.slot;
	c->epoch = w.epoch;
	c->rpc = (struct sdr_rpc *)(c->seg + c->L.rpc_off);
	if (kind == SDR_CLIENT_SDK) {
		for (uint32_t q = 0; q < c->L.queues; q++) {
			sdr_spsc_bind(&c->sq[q], c->seg + c->L.sq_off[q], SDR_SHM_QUEUE_DEPTH,
				      sizeof(struct sdr_sdk_req));
			sdr_spsc_bind(&c->cq[q], c->seg + c->L.cq_off[q], SDR_SHM_QUEUE_DEPTH,
				      sizeof(struct sdr_sdk_cqe));
		}
		c->arena = c->seg + c->L.arena_off;
	}
	return 0;
fail:
	sdr_client_detach(c);
	return -1;
}

void
sdr_client_detach(struct sdr_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->seg != NULL)
		munmap(c->seg, c->seg_len);
	c->seg = NULL;
	free(c->rep);
	c->rep = NULL;
	sdr_shm_status_unmap(c->st);
	c->st = NULL;
}

int
sdr_client_alive(struct sdr_client *c)
{
	struct pollfd p = { .fd = c->fd, .events = 0 };

	if (c->fd < 0)
		return 0;
	/* a hang-up is the dataplane gone (a doorbell byte pending is not) */
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR))) {
		close(c->fd);
		c->fd = -1;
		return 0;
	}
	return sdr_shm_dp_alive(c->st) && c->st->epoch == c->epoch;
}

void
sdr_client_gone_reason(struct sdr_client *c, char *buf, size_t len)
{
	const struct sdr_shm_status *st = c->st;
	char e[128];
	const struct sdr_shm_status *now = sdr_shm_status_map(c->instance, e, sizeof(e));

	/* a new dataplane under the same name has a new status segment: say which it is */
	if (now != NULL && now->epoch != c->epoch && sdr_shm_dp_alive(now))
		snprintf(buf, len, "dataplane '%s' restarted (pid %d, now pid %d)", c->instance,
			 st->dp_pid, now->dp_pid);
	else
		snprintf(buf, len, "dataplane '%s' (pid %d) %s", c->instance, st->dp_pid,
			 !st->alive ? "stopped" : st->epoch != c->epoch ? "restarted" :
			 sdr_shm_age_ns(&st->heartbeat_ns) >= 2000000000ull ?
			 "stopped answering (no heartbeat for 2 s)" : "is gone");
	sdr_shm_status_unmap(now);
}

/*
 * The reply in the segment, into the client's own c->rep: each field read once, len
 * bounded, a text terminated. The union is copied as far as the longest of its fixed
 * members or the text's len, whichever is more. @return its rc.
 */
static int
reply_copy(struct sdr_client *c, const volatile struct sdr_rpc_rep *in, uint32_t seq)
{
	struct sdr_rpc_rep *out = c->rep;
	size_t fixed = sizeof(out->u.info) > sizeof(out->u.expand) ? sizeof(out->u.info) :
		       sizeof(out->u.expand), n;

	out->seq = seq;
	out->rc = in->rc;
	out->len = in->len;
	if (out->len >= SDR_RPC_REPLY_MAX)
		out->len = SDR_RPC_REPLY_MAX - 1;
	n = out->len + 1 > fixed ? out->len + 1 : fixed;
	memcpy(&out->u, (const void *)&in->u, n);
	/* a text: every admin reply, and an SDK call's refusal (an SDK call that succeeds
	 * answers in the union's other members, which a NUL at len 0 would overwrite) */
	if (c->kind == SDR_CLIENT_ADMIN || out->rc != SDR_CTL_OK)
		out->u.text[out->len] = '\0';
	return out->rc;
}

int
sdr_client_call(struct sdr_client *c, unsigned int timeout_ms, char *err, size_t errlen)
{
	uint64_t deadline = sdr_shm_mono_ns() + (uint64_t)timeout_ms * 1000000;
	struct sdr_rpc *r = c->rpc;
	uint32_t seq = ++c->seq;
	char bell = 1;

	if (!sdr_client_alive(c)) {
		sdr_client_gone_reason(c, err, errlen);
		return -1;
	}
	__atomic_store_n(&r->req.seq, seq, __ATOMIC_RELEASE);
	if (send(c->fd, &bell, 1, MSG_NOSIGNAL) != 1) {
		sdr_client_gone_reason(c, err, errlen);
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		uint64_t now = sdr_shm_mono_ns();
		int ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1;

		if (ms > 200)
			ms = 200;	/* look at the heartbeat now and then */
		if (poll(&p, 1, ms) == 1) {
			if (recv(c->fd, &bell, 1, MSG_DONTWAIT) != 1) {
				close(c->fd);
				c->fd = -1;
				sdr_client_gone_reason(c, err, errlen);
				return -1;
			}
			if (__atomic_load_n(&r->rep.seq, __ATOMIC_ACQUIRE) != seq)
				continue;	/* the bell of an earlier call that timed out */
			return reply_copy(c, &r->rep, seq);
		}
		if (!sdr_client_alive(c)) {
			sdr_client_gone_reason(c, err, errlen);
			return -1;
		}
		if (sdr_shm_mono_ns() >= deadline) {
			snprintf(err, errlen, "dataplane '%s' (pid %d) did not answer in time",
				 c->instance, c->st->dp_pid);
			return -1;
		}
	}
}
