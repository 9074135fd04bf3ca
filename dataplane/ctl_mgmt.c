/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control service's management thread: the status segment, the admin and SDK sockets,
 * a segment per client, the calls clients make. See control.h and ctl.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_ring.h>

#include "control.h"
#include "ctl.h"
#include "rel_tx.h"

#define HELLO_TIMEOUT_NS 5000000000ull	/* a connection that says nothing is dropped */
/* Bytes of a reply that every call writes: the structured answers (info, imm, expand) */
#define REP_FIXED 256

/* ---- jobs for the engine ---- */

int
ctl_engine_call(struct dp_ctx *ctx, struct ctl_job *j)
{
	int up = __atomic_load_n(&ctx->engine_up, __ATOMIC_ACQUIRE);

	j->done = 0;
	/* (stopped: never in the caller, which the lcores' last reads may still race) */
	if (ctx->quit || up == DP_ENGINES_DONE)
		return j->rc = -ESHUTDOWN;
	if (up == DP_ENGINES_NOT_YET) {
		j->rc = j->fn(ctx, j);
		return j->rc;
	}
	if (j->engine >= DP_MAX_ENGINES || (j->engine && ctx->ctl->ejobs[j->engine] == NULL))
		return j->rc = -EINVAL;	/* callers check the engine first */
	while (rte_ring_sp_enqueue(j->engine ? ctx->ctl->ejobs[j->engine] : ctx->ctl->jobs,
				   j) != 0)
		usleep(50);
	while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) {
		/* every engine has returned: the job ran before (done, looked at once more), or
		 * nothing will run it */
		if (ctx->quit && __atomic_load_n(&ctx->engine_up, __ATOMIC_ACQUIRE) != DP_ENGINES_UP) {
			if (__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
				break;
			return j->rc = -ESHUTDOWN;
		}
		usleep(20);
	}
	return j->rc;
}

/* ---- the status segment and the sockets ---- */

static int
status_create(struct dp_ctl *ctl, const char *name, mode_t mode, char *err, size_t errlen)
{
	struct sdr_shm_status *st;
	struct timespec ts;
	int fd;

	if (sdr_shm_path(name, ctl->st_path, sizeof(ctl->st_path)) != 0) {
		snprintf(err, errlen, "bad instance name '%s'", name);
		return -1;
	}
	/* a segment left by a dataplane that died is replaced; a live one is not */
	{
		char e[128];
		const struct sdr_shm_status *old = sdr_shm_status_map(name, e, sizeof(e));

		if (old != NULL && sdr_shm_dp_alive(old) && old->dp_pid != getpid()) {
			snprintf(err, errlen, "instance '%s' is running already (pid %d): give this "
				 "one another [dataplane] name or -n", name, old->dp_pid);
			sdr_shm_status_unmap(old);
			return -1;
		}
		sdr_shm_status_unmap(old);
	}
	shm_unlink(ctl->st_path);
	fd = shm_open(ctl->st_path, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* another user's, which /dev/shm's sticky bit keeps us from removing */
		snprintf(err, errlen, "shared memory /dev/shm%s is another user's: remove it "
			 "(or give this dataplane another [dataplane] name or -n)", ctl->st_path);
		return -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot create shared memory %s: %s", ctl->st_path,
			 strerror(errno));
		return -1;
	}
	if ((ctl->gid != (gid_t)-1 && fchown(fd, (uid_t)-1, ctl->gid) != 0) ||
	    fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)sizeof(*st)) != 0 ||
	    (st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
	    MAP_FAILED) {
		snprintf(err, errlen, "cannot set up %s: %s", ctl->st_path, strerror(errno));
		close(fd);
		shm_unlink(ctl->st_path);
		return -1;
	}
	close(fd);
	st->magic = SDR_SHM_MAGIC;
	st->version = SDR_SHM_VERSION;
	st->hdr_size = sizeof(*st);
	st->total_size = sizeof(*st);
	snprintf(st->name, sizeof(st->name), "%s", name);
	st->dp_pid = getpid();
	clock_gettime(CLOCK_REALTIME, &ts);
	st->epoch = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	st->heartbeat_ns = sdr_shm_mono_ns();
	memcpy(st->admin_sock, ctl->sock_path[0], sizeof(st->admin_sock));
	memcpy(st->sdk_sock, ctl->sock_path[1], sizeof(st->sdk_sock));
	ctl->st = st;
	return 0;
}

static int
socket_create(const char *path, mode_t mode, gid_t gid, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create a socket: %s", strerror(errno));
		return -1;
	}
	unlink(path);	/* a dataplane of this name that died left it */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0) ||
	    chmod(path, mode) != 0 || listen(fd, 64) != 0) {
		snprintf(err, errlen, "cannot set up the control socket %s: %s", path,
			 strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* Where the sockets go: control_dir, or for a dataplane that is not root and kept the
 * default, its runtime directory (as DPDK does for its own). */
static int
control_dir(const struct dp_cfg *cfg, char *dir, size_t len, char *err, size_t errlen)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() != 0 && strcmp(cfg->control_dir, "/run/sdr") == 0 && xdg != NULL &&
	    xdg[0] == '/' && strlen(xdg) < 48)
		snprintf(dir, len, "%s/sdr", xdg);
	else if (geteuid() != 0 && strcmp(cfg->control_dir, "/run/sdr") == 0)
		snprintf(dir, len, "/tmp/sdr-%u", (unsigned int)geteuid());
	else
		snprintf(dir, len, "%s", cfg->control_dir);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create the control directory %s: %s (set [dataplane] "
			 "control_dir)", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int
sdk_alloc(struct sdk_service *s)
{
	for (unsigned int i = 0; i < SDR_SHM_SDK_CLIENTS; i++) {
		struct sdk_client *c = &s->clients[i];

		c->ops = calloc(CTL_OPS_PER_CLIENT, sizeof(*c->ops));
		c->free_ops = calloc(CTL_OPS_PER_CLIENT, sizeof(*c->free_ops));
		c->rel_ops = calloc(CTL_OPS_PER_CLIENT, sizeof(*c->rel_ops));
		c->deferred = calloc(1, sizeof(*c->deferred));
		if (c->ops == NULL || c->free_ops == NULL || c->rel_ops == NULL ||
		    c->deferred == NULL)
			return -1;
	}
	return 0;
}

static void
sdk_free(struct sdk_service *s)
{
	for (unsigned int i = 0; i < SDR_SHM_SDK_CLIENTS; i++) {
		free(s->clients[i].ops);
		free(s->clients[i].free_ops);
		free(s->clients[i].rel_ops);
		free(s->clients[i].deferred);
	}
}

int
dp_control_init(struct dp_ctx *ctx, char *err, size_t errlen)
{
	struct dp_ctl *ctl = calloc(1, sizeof(*ctl));
	char dir[DP_CONTROL_DIR_LEN + 16], rname[RTE_RING_NAMESIZE];
	mode_t sdk_mode = 0600, st_mode = 0600;

	if (ctl == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ctx->ctl = ctl;
	ctl->lfd[0] = ctl->lfd[1] = -1;
	ctl->gid = (gid_t)-1;
	for (unsigned int i = 0; i < SDR_SHM_MAX_CLIENTS; i++)
		ctl->slots[i].fd = -1;
	ctl->arena_len = (ctx->cfg.arena_bytes / SDR_SHM_SDK_CLIENTS) & ~4095ull;
	ctl->per_user = ctx->cfg.sdk_slots_per_user;
	if (ctx->cfg.control_group[0]) {
		struct group gr, *g = NULL;
		char buf[4096];

		if (getgrnam_r(ctx->cfg.control_group, &gr, buf, sizeof(buf), &g) != 0 || g == NULL) {
			snprintf(err, errlen, "[dataplane] control_group '%s': no such group",
				 ctx->cfg.control_group);
			goto fail;
		}
		ctl->gid = g->gr_gid;
		sdk_mode = 0660;
		st_mode = 0640;
	}
	ctl->engines = ctx->cfg.engines ? ctx->cfg.engines : 1;
	for (unsigned int e = 0; e < ctl->engines; e++) {
		ctl->sdk[e].engine = e;
		if (sdk_alloc(&ctl->sdk[e]) != 0)
			ctl->engines = 0;
	}
	if (ctl->engines == 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (control_dir(&ctx->cfg, dir, sizeof(dir), err, errlen) != 0)
		goto fail;
	for (int k = 0; k < 2; k++)
		if ((size_t)snprintf(ctl->sock_path[k], sizeof(ctl->sock_path[k]), "%s/%s.%s", dir,
				     ctx->cfg.name, k ? "sdk" : "admin") >= sizeof(ctl->sock_path[k])) {
			snprintf(err, errlen, "control socket path %s/%s.admin is too long", dir,
				 ctx->cfg.name);
			goto fail;
		}
	if (status_create(ctl, ctx->cfg.name, st_mode, err, errlen) != 0)
		goto fail;
	ctl->lfd[0] = socket_create(ctl->sock_path[0], 0600, (gid_t)-1, err, errlen);
	if (ctl->lfd[0] < 0)
		goto fail;
	ctl->lfd[1] = socket_create(ctl->sock_path[1], sdk_mode, ctl->gid, err, errlen);
	if (ctl->lfd[1] < 0)
		goto fail;
	snprintf(rname, sizeof(rname), "sdr_ctl_jobs");
	ctl->jobs = rte_ring_create(rname, 16, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ctl->jobs == NULL) {
		snprintf(err, errlen, "cannot create the control job ring");
		goto fail;
	}
	for (unsigned int e = 1; e < ctx->cfg.engines; e++) {
		snprintf(rname, sizeof(rname), "sdr_ctl_jobs%u", e);
		ctl->ejobs[e] = rte_ring_create(rname, 16, SOCKET_ID_ANY,
						RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (ctl->ejobs[e] == NULL) {
			snprintf(err, errlen, "cannot create engine %u's control job ring", e);
			goto fail;
		}
	}
	dp_control_tick(ctx);	/* counters are readable from the first client on */
	return 0;
fail:
	dp_control_fini(ctx);
	return -1;
}

/* ---- clients ---- */

static unsigned int
slot_lo(uint32_t kind)
{
	return kind == SDR_CLIENT_SDK ? 0 : SDR_SHM_SDK_CLIENTS;
}

static void
slot_free(struct dp_ctx *ctx, struct ctl_slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->seg != NULL) {
		/* no frame points into its buffers any more (ctl_sdk_gone()) */
		if (s->kind == SDR_CLIENT_SDK)
			dp_dma_del(ctx, s->seg + s->L.arena_off);
		munmap(s->seg, s->L.size);
	}
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* Slots of @p kind held by user @p uid (a slot waiting for its hello counts). */
static unsigned int
slots_of_user(const struct dp_ctl *ctl, uint32_t kind, uid_t uid)
{
	unsigned int lo = slot_lo(kind), n = 0;

	for (unsigned int i = lo; i < lo + SDR_SHM_SDK_CLIENTS; i++)
		n += ctl->slots[i].state != CTL_FREE && ctl->slots[i].uid == uid;
	return n;
}

/* Tell a connection why it has no slot; its hello is read before it is closed. */
static void
refuse(struct dp_ctl *ctl, int fd, int rc, const char *why)
{
	struct sdr_welcome w = { .magic = SDR_CLIENT_MAGIC, .version = SDR_SHM_VERSION,
				 .rc = rc };

	snprintf(w.msg, sizeof(w.msg), "instance '%s': %s", ctl->st->name, why);
	send(fd, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT);
	if (ctl->nrefused == sizeof(ctl->refused) / sizeof(ctl->refused[0]))
		close(fd);	/* a flood: no wait for its hello */
	else
		ctl->refused[ctl->nrefused++] = (typeof(ctl->refused[0])){ fd, sdr_shm_mono_ns() };
}

/*
 * A new connection on listening socket @p k (0 admin, 1 sdk): a slot waits for its hello.
 * An application's user holds at most per_user application slots (but the dataplane's).
 */
static void
on_accept(struct dp_ctl *ctl, int k)
{
	uint32_t kind = k ? SDR_CLIENT_SDK : SDR_CLIENT_ADMIN;
	unsigned int lo = slot_lo(kind), n = k ? SDR_SHM_SDK_CLIENTS : SDR_SHM_ADMIN_CLIENTS;
	char why[96];
	int fd;

	while ((fd = accept4(ctl->lfd[k], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ucred cr = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		socklen_t crl = sizeof(cr);
		unsigned int i, held;

		/* unread, uid -1 stays: a user of its own, limited as any other */
		(void)getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl);
		for (i = lo; i < lo + n && ctl->slots[i].state != CTL_FREE; i++)
			;
		if (i == lo + n) {
			snprintf(why, sizeof(why), "all %u %s slots are taken", n,
				 k ? "application" : "client");
			refuse(ctl, fd, ENOSPC, why);
			continue;
		}
		if (k && cr.uid != geteuid() &&
		    (held = slots_of_user(ctl, kind, cr.uid)) >= ctl->per_user) {
			snprintf(why, sizeof(why), "user %u holds %u application slots, its "
				 "sdk_slots_per_user", (unsigned int)cr.uid, held);
			refuse(ctl, fd, EDQUOT, why);
			continue;
		}
		memset(&ctl->slots[i], 0, sizeof(ctl->slots[i]));
		ctl->slots[i].state = CTL_HELLO;
		ctl->slots[i].kind = (uint8_t)kind;
		ctl->slots[i].fd = fd;
		ctl->slots[i].since_ns = sdr_shm_mono_ns();
		ctl->slots[i].pid = cr.pid;
		ctl->slots[i].uid = cr.uid;
	}
}

/* The client's own segment: an unnamed memfd, sealed so it cannot shrink under us. */
static int
segment_create(struct dp_ctx *ctx, struct ctl_slot *s, unsigned int slot, int *fd_out,
	       char *err, size_t errlen)
{
	struct dp_ctl *ctl = ctx->ctl;
	struct sdr_client_hdr *h;
	int fd = memfd_create("sdr-client", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	sdr_client_layout(s->kind, s->kind == SDR_CLIENT_SDK ? ctl->arena_len : 0,
			  ctl->engines, &s->L);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)s->L.size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	s->seg = mmap(NULL, s->L.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s->seg == MAP_FAILED) {
		int e = errno;

		s->seg = NULL;
		close(fd);
		return -e;
	}
	/* the buffers its sends point into, for a NIC that reads them by DMA (dma.h) */
	if (s->kind == SDR_CLIENT_SDK &&
	    dp_dma_add(ctx, s->seg + s->L.arena_off, s->L.arena_len, err, errlen) != 0) {
		munmap(s->seg, s->L.size);
		s->seg = NULL;
		close(fd);
		return -EIO;
	}
	h = (struct sdr_client_hdr *)s->seg;
	*h = (struct sdr_client_hdr){ .magic = SDR_CLIENT_MAGIC, .version = SDR_SHM_VERSION,
				      .kind = s->kind, .slot = slot, .epoch = ctl->st->epoch,
				      .size = s->L.size, .arena_len = s->L.arena_len };
	*fd_out = fd;
	return 0;
}

static void
send_welcome(int sock, const struct sdr_welcome *w, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)(uintptr_t)w, .iov_len = sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The first message of a connection: a hello of our version, or the connection is dropped. */
static void
on_hello(struct dp_ctx *ctx, unsigned int i)
{
	struct dp_ctl *ctl = ctx->ctl;
	struct ctl_slot *s = &ctl->slots[i];
	struct sdr_welcome w = { .magic = SDR_CLIENT_MAGIC, .version = SDR_SHM_VERSION };
	struct sdr_hello h;
	char why[160] = "";
	ssize_t n = recv(s->fd, &h, sizeof(h), MSG_DONTWAIT);
	int fd = -1, rc, attach = 0;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != (ssize_t)sizeof(h) || h.magic != SDR_CLIENT_MAGIC || h.version != SDR_SHM_VERSION) {
		if (n == (ssize_t)sizeof(h) && h.magic == SDR_CLIENT_MAGIC) {
			w.rc = EPROTO;
			snprintf(w.msg, sizeof(w.msg), "instance '%s' speaks control version %u, this "
				 "program speaks %u: use the tools of the same build as the dataplane",
				 ctl->st->name, SDR_SHM_VERSION, h.version);
			send_welcome(s->fd, &w, -1);
		}
		slot_free(ctx, s);
		return;
	}
	rc = segment_create(ctx, s, i, &fd, why, sizeof(why));
	if (rc == 0 && s->kind == SDR_CLIENT_SDK &&
	    (attach = ctl_sdk_attach(ctx, i, s->seg, &s->L)) != 0)
		rc = attach;
	if (rc != 0) {
		w.rc = -rc;
		snprintf(w.msg, sizeof(w.msg), "instance '%s': cannot make the client's segment: %s",
			 ctl->st->name, why[0] ? why : strerror(-rc));
		send_welcome(s->fd, &w, -1);
		if (fd >= 0)
			close(fd);
		if (attach != 0) {
			/* engines that took the client before one refused poll its segment: it
			 * leaves as a client that hung up does, mapped until every engine let go
			 * (finish_leaving(); dp_control_fini() once the lcores stopped) */
			close(s->fd);
			s->fd = -1;
			s->state = CTL_LEAVING;
			ctl_sdk_detach(ctx, i);
			return;
		}
		slot_free(ctx, s);
		return;
	}
	w.slot = i;
	w.kind = s->kind;
	w.epoch = ctl->st->epoch;
	w.size = s->L.size;
	w.arena_len = s->L.arena_len;
	w.queues = s->L.queues;
	send_welcome(s->fd, &w, fd);
	close(fd);
	s->state = CTL_ACTIVE;
}

/* A client that closed its socket, died, or broke the protocol. */
static void
on_gone(struct dp_ctx *ctx, unsigned int i)
{
	struct ctl_slot *s = &ctx->ctl->slots[i];

	if (s->kind != SDR_CLIENT_SDK || s->state != CTL_ACTIVE) {
		slot_free(ctx, s);
		return;
	}
	/* the engine ends what it has in flight; the segment stays mapped until it is done */
	close(s->fd);
	s->fd = -1;
	s->state = CTL_LEAVING;
	ctl_sdk_detach(ctx, i);
}

/*
 * A leaving SDK client: once nothing of it is left, the connections it made go too. One that
 * another application has open passes to that application, as if it had made it: counted in
 * its quotas, deleted when it destroys it or leaves in turn. One the dataplane's own --traffic
 * drives becomes the administrator's (sdrctl conn del).
 */
static void
finish_leaving(struct dp_ctx *ctx, unsigned int i)
{
	char err[256];
	int busy = 0;

	if (!ctl_sdk_gone(ctx, i))
		return;
	for (unsigned int c = 0; c < ctx->nconns; c++) {
		struct dp_conn *conn = &ctx->conns[c];

		if (conn->ep == NULL || conn->creator != (int)i)
			continue;
		if (conn->owner >= 0 || conn->traffic != NULL) {
			conn->creator = conn->traffic == NULL ? conn->owner : -1;
			continue;
		}
		if (ctl_conn_delete(ctx, c, err, sizeof(err)) != 0)
			busy = 1;	/* its last messages are still ending: next time */
	}
	if (!busy)
		slot_free(ctx, &ctx->ctl->slots[i]);
}

/* Run the call in client @p i's segment (a doorbell rang) and ring back. */
static void
run_call(struct dp_ctx *ctx, unsigned int i)
{
	struct dp_ctl *ctl = ctx->ctl;
	struct ctl_slot *s = &ctl->slots[i];
	struct sdr_rpc *rpc = (struct sdr_rpc *)(s->seg + s->L.rpc_off);
	struct sdr_rpc_req *q = &ctl->req;
	struct sdr_rpc_rep *r = &ctl->rep;
	size_t len;
	char bell = 1;

	/* one copy out, checked there: the client may rewrite the original meanwhile */
	memcpy(q, &rpc->req, sizeof(*q));
	if (q->seq == s->last_seq)
		return;		/* nothing new: a stray bell */
	s->last_seq = q->seq;
	q->name[sizeof(q->name) - 1] = '\0';
	if (q->len >= sizeof(q->text))
		q->len = sizeof(q->text) - 1;
	q->text[q->len] = '\0';
	memset(r, 0, offsetof(struct sdr_rpc_rep, u) + REP_FIXED);
	if (s->kind == SDR_CLIENT_ADMIN && q->op == SDR_RPC_COMMAND) {
		r->rc = ctl_cli_exec(ctx, q->text, (q->flags & SDR_CMD_F_JSON) != 0, r->u.text,
				     sizeof(r->u.text));
		r->len = (uint32_t)strlen(r->u.text);
	} else if (s->kind == SDR_CLIENT_SDK && q->op != SDR_RPC_COMMAND) {
		ctl_sdk_call(ctx, i, q, r);
	} else {
		r->rc = SDR_CTL_BAD_INPUT;
		r->len = (uint32_t)snprintf(r->u.text, sizeof(r->u.text), "%s",
					    s->kind == SDR_CLIENT_SDK ?
					    "commands need the admin channel (sdrctl)" :
					    "SDK calls need the SDK channel (libsdr)");
	}
	/* the reply: its contents, then the sequence number that says it is there */
	len = r->len + 1 > REP_FIXED ? (size_t)r->len + 1 : REP_FIXED;
	memcpy(&rpc->rep.u, &r->u, len < sizeof(r->u) ? len : sizeof(r->u));
	rpc->rep.rc = r->rc;
	rpc->rep.len = r->len;
	__atomic_store_n(&rpc->rep.seq, q->seq, __ATOMIC_RELEASE);
	send(s->fd, &bell, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Doorbells on an active client's socket, or its end. */
static void
on_readable(struct dp_ctx *ctx, unsigned int i)
{
	struct ctl_slot *s = &ctx->ctl->slots[i];
	char buf[64];
	ssize_t n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		on_gone(ctx, i);
		return;
	}
	/* whatever the bells said: the call is in the segment. A bounded number of reads: a
	 * client that rings faster than this thread reads must not hold it here (the rest is
	 * read at the next wakeup, the socket still readable) */
	for (int k = 0; k < 16 && recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0; k++)
		;
	run_call(ctx, i);
}

/* Refused connections: closed once their hello is read, they hang up, or after a second. */
static void
refused_sweep(struct dp_ctl *ctl, uint64_t now)
{
	for (unsigned int i = 0; i < ctl->nrefused;) {
		char buf[64];
		ssize_t n = recv(ctl->refused[i].fd, buf, sizeof(buf), MSG_DONTWAIT);

		if ((n < 0 && (errno == EAGAIN || errno == EINTR)) &&
		    now - ctl->refused[i].since_ns < 1000000000ull) {
			i++;
			continue;
		}
		close(ctl->refused[i].fd);
		ctl->refused[i] = ctl->refused[--ctl->nrefused];
	}
}

static void *
mgmt_thread(void *arg)
{
	struct dp_ctx *ctx = arg;
	struct dp_ctl *ctl = ctx->ctl;

	while (!ctl->stop) {
		struct pollfd p[2 + SDR_SHM_MAX_CLIENTS];
		unsigned int who[2 + SDR_SHM_MAX_CLIENTS], n = 0;
		uint64_t now = sdr_shm_mono_ns();

		for (int k = 0; k < 2; k++) {
			p[n] = (struct pollfd){ .fd = ctl->lfd[k], .events = POLLIN };
			who[n++] = UINT32_MAX - (unsigned int)k;
		}
		refused_sweep(ctl, now);
		ctl_auto_sweep(ctx, now);
		ctl_paths_sweep(ctx, now);
		for (unsigned int i = 0; i < SDR_SHM_MAX_CLIENTS; i++) {
			struct ctl_slot *s = &ctl->slots[i];

			if (s->state == CTL_ACTIVE && s->kind == SDR_CLIENT_SDK && ctl_sdk_kicked(ctx, i))
				on_gone(ctx, i);	/* it broke its queues: dropped */
			if (s->state == CTL_LEAVING)
				finish_leaving(ctx, i);
			if (s->state == CTL_HELLO && now - s->since_ns > HELLO_TIMEOUT_NS)
				slot_free(ctx, s);
			if (s->state != CTL_HELLO && s->state != CTL_ACTIVE)
				continue;
			p[n] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
			who[n++] = i;
		}
		/* (10 ms: a code an engine waits for is made at the next sweep, ctl_auto.c) */
		if (poll(p, n, 10) <= 0)
			continue;
		for (unsigned int k = 0; k < n && !ctl->stop; k++) {
			if (!p[k].revents)
				continue;
			if (who[k] >= UINT32_MAX - 1) {
				on_accept(ctl, (int)(UINT32_MAX - who[k]));
				continue;
			}
			if (ctl->slots[who[k]].state == CTL_HELLO)
				on_hello(ctx, who[k]);
			else if (p[k].revents & (POLLHUP | POLLERR))
				on_gone(ctx, who[k]);
			else
				on_readable(ctx, who[k]);
		}
	}
	return NULL;
}

int
dp_control_start(struct dp_ctx *ctx, char *err, size_t errlen)
{
	struct dp_ctl *ctl = ctx->ctl;
	int rc;

	ctl->start_ns = sdr_shm_mono_ns();
	rc = rte_ctrl_thread_create(&ctl->thread, "sdr-ctl", NULL, mgmt_thread, ctx);

	if (rc != 0) {
		snprintf(err, errlen, "cannot start the control thread: %s", strerror(rc));
		return -1;
	}
	ctl->thread_started = 1;
	return 0;
}

void
dp_control_stop(struct dp_ctx *ctx)
{
	struct dp_ctl *ctl = ctx->ctl;

	if (ctl == NULL)
		return;
	if (ctl->thread_started) {
		ctl->stop = 1;
		pthread_join(ctl->thread, NULL);
		ctl->thread_started = 0;
	}
	/* stopped, said before any client's socket hangs up: a client woken by the hang-up
	 * reads why (sdr_client_gone_reason()), and must not find the old flag still set */
	if (ctl->st != NULL) {
		ctl->st->alive = 0;
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
}

void
dp_control_fini(struct dp_ctx *ctx)
{
	struct dp_ctl *ctl = ctx->ctl;

	if (ctl == NULL)
		return;
	dp_control_stop(ctx);
	for (unsigned int i = 0; i < SDR_SHM_MAX_CLIENTS; i++)
		if (ctl->slots[i].state != CTL_FREE)
			slot_free(ctx, &ctl->slots[i]);
	while (ctl->nrefused > 0)
		close(ctl->refused[--ctl->nrefused].fd);
	for (int k = 0; k < 2; k++) {
		if (ctl->lfd[k] >= 0) {
			close(ctl->lfd[k]);
			unlink(ctl->sock_path[k]);
		}
	}
	if (ctl->st != NULL) {
		munmap(ctl->st, sizeof(*ctl->st));
		shm_unlink(ctl->st_path);
	}
	rte_ring_free(ctl->jobs);
	for (unsigned int e = 1; e < DP_MAX_ENGINES; e++)
		rte_ring_free(ctl->ejobs[e]);
	for (unsigned int e = 0; e < DP_MAX_ENGINES; e++)
		sdk_free(&ctl->sdk[e]);
	free(ctl);
	ctx->ctl = NULL;
}

/* ---- the engine's and the main lcore's share ---- */

unsigned int
dp_control_poll(struct dp_ctx *ctx, uint64_t now)
{
	return ctx->ctl != NULL ? ctl_sdk_poll(ctx, now) : 0;
}

unsigned int
dp_control_engine_poll(struct dp_ctx *ctx, unsigned int engine, uint64_t now)
{
	struct ctl_job *j;
	unsigned int n = 0;

	if (ctx->ctl == NULL || engine == 0 || ctx->ctl->ejobs[engine] == NULL)
		return 0;
	while (rte_ring_sc_dequeue(ctx->ctl->ejobs[engine], (void **)&j) == 0) {
		j->rc = j->fn(ctx, j);
		__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
		n++;
	}
	return n + ctl_sdk_shard_poll(ctx, engine, now);
}

int
dp_control_exec(struct dp_ctx *ctx, const char *line, int json, char *out, size_t outlen)
{
	return ctl_cli_exec(ctx, line, json, out, outlen);
}

void
dp_control_tick(struct dp_ctx *ctx)
{
	struct sdr_shm_stats *s;

	if (ctx->ctl == NULL || ctx->ctl->st == NULL)
		return;
	ctx->ctl->st->heartbeat_ns = sdr_shm_mono_ns();
	ctx->ctl->st->alive = 1;
	s = &ctx->ctl->st->stats;
	rte_spinlock_lock(&ctx->conns_lock);	/* the engine may be replacing one */
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);	/* odd: writing */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->time_ns = dp_now_ns(ctx);
	s->nports = ctx->nports < SDR_SHM_MAX_PORTS ? ctx->nports : SDR_SHM_MAX_PORTS;
	for (unsigned int i = 0; i < s->nports; i++) {
		const struct dp_port *p = &ctx->ports[i];
		struct sdr_shm_port_stats *ps = &s->ports[i];

		snprintf(ps->name, sizeof(ps->name), "%s", p->cfg->name);
		ps->rx_pkts = dp_port_counter(p, DP_PORT_RX_PKTS);
		ps->rx_bytes = dp_port_counter(p, DP_PORT_RX_BYTES);
		ps->tx_pkts = dp_port_counter(p, DP_PORT_TX_PKTS);
		ps->tx_bytes = dp_port_counter(p, DP_PORT_TX_BYTES);
		ps->drops = dp_port_drops(p);
	}
	s->nconns = 0;
	for (unsigned int i = 0; i < ctx->nconns && s->nconns < SDR_SHM_MAX_CONNS; i++) {
		const struct dp_conn *c = &ctx->conns[i];
		struct sdr_shm_conn_stats *cs;
		const uint64_t *ec, *rc, *rt;
		uint64_t rxd = 0;

		if (c->ep == NULL)
			continue;
		cs = &s->conns[s->nconns++];
		ec = sdr_ep_counters(c->ep);
		rc = sdr_ep_rx_counters(c->ep);
		rt = sdr_ep_rel_tx_counters(c->ep);
		rxd = sdr_counter_drops(&sdr_rx_counter_table, rc);
		snprintf(cs->name, sizeof(cs->name), "%s", c->cfg->name);
		{
			/* the scheme in force (auto's changes it), as conn show says */
			struct sdr_scheme now = sdr_ep_scheme(c->ep, NULL);

			sdr_scheme_format(&now, cs->scheme, sizeof(cs->scheme));
		}
		cs->data_pkts_in = ec[SDR_EP_DATA_PKTS_IN];
		cs->data_pkts_out = ec[SDR_EP_DATA_PKTS_OUT] + ec[SDR_EP_PARITY_PKTS_OUT];
		cs->ctrl_pkts_in = ec[SDR_EP_CTRL_PKTS_IN];
		cs->ctrl_pkts_out = ec[SDR_EP_CTRL_PKTS_OUT];
		cs->sends_ok = ec[SDR_EP_SEND_OK];
		cs->recvs_ok = ec[SDR_EP_RECV_OK];
		cs->failed = ec[SDR_EP_SEND_FAILED] + ec[SDR_EP_RECV_FAILED];
		cs->retransmitted = rt[REL_TX_RETRANSMITS];
		cs->decoded = ec[SDR_EP_DECODES];
		cs->rx_drops = rxd;
	}
	rte_spinlock_unlock(&ctx->conns_lock);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);	/* even: done */
}
