/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client side of the control segment (control/sdr_shm.c) against a dataplane that lies:
 * a status segment of another user, a socket served by another process than the one the
 * segment names, a welcome whose arena would wrap the layout, a reply whose length runs past
 * the reply area and changes after it was read. A fake dataplane (a thread of this process
 * with a status segment, a socket and a client segment of its own) plays each part; the
 * client must refuse, or read only its own bounded copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sdr_shm.h"

/* What the fake dataplane does once a client has said hello. */
enum act {
	ACT_HONEST,		/* a welcome as the dataplane's, then one call answered */
	ACT_WRAP,		/* a welcome whose arena wraps the layout's sums */
};

struct fake {
	char inst[32];
	char shm[48];
	char sock[108];
	int lfd;
	int seg_fd;
	uint8_t *seg;
	uint64_t seg_len;
	struct sdr_client_layout L;
	enum act act;
	pthread_t th;
	int served;
};

static struct sdr_shm_status *
fake_status(struct fake *f, int32_t pid)
{
	struct sdr_shm_status *st;
	struct timespec ts;
	int fd;

	shm_unlink(f->shm);
	fd = shm_open(f->shm, O_CREAT | O_EXCL | O_RDWR, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, sizeof(*st)), 0);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(st != MAP_FAILED);
	close(fd);
	st->magic = SDR_SHM_MAGIC;
	st->version = SDR_SHM_VERSION;
	st->hdr_size = sizeof(*st);
	st->total_size = sizeof(*st);
	st->dp_pid = pid;
	st->alive = 1;
	st->epoch = 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	st->heartbeat_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	snprintf(st->sdk_sock, sizeof(st->sdk_sock), "%s", f->sock);
	snprintf(st->admin_sock, sizeof(st->admin_sock), "%s", f->sock);
	return st;
}

static void
send_welcome(int fd, const struct sdr_welcome *w, int seg_fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)(uintptr_t)w, .iov_len = sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &seg_fd, sizeof(int));
	(void)sendmsg(fd, &mh, MSG_NOSIGNAL);
}

/* The fake dataplane: one client, one hello, the welcome of f->act, then one call. */
static void *
fake_serve(void *arg)
{
	struct fake *f = arg;
	struct sdr_welcome w = { .magic = SDR_CLIENT_MAGIC, .version = SDR_SHM_VERSION,
				 .kind = SDR_CLIENT_SDK, .epoch = 1, .queues = 1 };
	struct pollfd p = { .events = POLLIN };
	struct sdr_client_hdr *ch;
	struct sdr_hello h;
	struct sdr_rpc *rpc;
	char bell;
	int fd;

	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0 || recv(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	if (f->act == ACT_WRAP) {
		/* an arena that wraps arena_off + arena_len round to 4 KiB: a segment of one
		 * page, where the queues, the calls and the arena would lie past its end */
		sdr_client_layout(SDR_CLIENT_SDK, 1 << 20, 1, &f->L);
		w.arena_len = 0 - f->L.arena_off + 4096;
		w.size = 4096;
	} else {
		w.arena_len = 1 << 20;
		sdr_client_layout(SDR_CLIENT_SDK, w.arena_len, 1, &f->L);
		w.size = f->L.size;
	}
	f->seg_fd = memfd_create("fake-client", 0);
	if (f->seg_fd < 0 || ftruncate(f->seg_fd, (off_t)w.size) != 0)
		goto out;
	f->seg = mmap(NULL, w.size, PROT_READ | PROT_WRITE, MAP_SHARED, f->seg_fd, 0);
	if (f->seg == MAP_FAILED)
		goto out;
	f->seg_len = w.size;
	ch = (struct sdr_client_hdr *)f->seg;
	ch->magic = SDR_CLIENT_MAGIC;
	ch->slot = 0;
	send_welcome(fd, &w, f->seg_fd);
	if (f->act != ACT_HONEST)
		goto out;
	/* one call: the reply says it is longer than the reply area */
	p.fd = fd;
	if (poll(&p, 1, 5000) != 1 || recv(fd, &bell, 1, 0) != 1)
		goto out;
	rpc = (struct sdr_rpc *)(f->seg + f->L.rpc_off);
	memset(rpc->rep.u.text, 'x', sizeof(rpc->rep.u.text));
	rpc->rep.rc = 1;
	rpc->rep.len = UINT32_MAX;
	__atomic_store_n(&rpc->rep.seq, rpc->req.seq, __ATOMIC_RELEASE);
	__atomic_store_n(&f->served, 1, __ATOMIC_RELEASE);
	(void)send(fd, &bell, 1, MSG_NOSIGNAL);
	/* hold the connection until the client has looked */
	(void)poll(&p, 1, 5000);
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void
fake_start(struct fake *f, enum act act)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(f, 0, sizeof(*f));
	snprintf(f->inst, sizeof(f->inst), "sdrt-fake%d", (int)getpid());
	snprintf(f->shm, sizeof(f->shm), "/sdr-%s", f->inst);
	snprintf(f->sock, sizeof(f->sock), "/tmp/%s.sock", f->inst);
	f->act = act;
	f->seg_fd = -1;
	unlink(f->sock);
	f->lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(f->lfd >= 0);
	memcpy(sa.sun_path, f->sock, strlen(f->sock));
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(pthread_create(&f->th, NULL, fake_serve, f), 0);
}

static void
fake_stop(struct fake *f, struct sdr_shm_status *st)
{
	/* a client that gave up before accept() leaves the thread waiting: one more connect */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	memcpy(sa.sun_path, f->sock, strlen(f->sock));
	if (fd >= 0) {
		(void)connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
	}
	pthread_join(f->th, NULL);
	close(f->lfd);
	unlink(f->sock);
	if (f->seg != NULL && f->seg != MAP_FAILED)
		munmap(f->seg, f->seg_len);
	if (f->seg_fd >= 0)
		close(f->seg_fd);
	munmap(st, sizeof(*st));
	shm_unlink(f->shm);
}

static void
expect_refused(struct fake *f, const char *want)
{
	struct sdr_client c;
	char err[512] = "";

	assert_int_equal(sdr_client_attach(f->inst, SDR_CLIENT_SDK, &c, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("attach refused with '%s', want '%s'", err, want);
}

/* A welcome whose arena length wraps the layout: refused, nothing mapped short. */
static void
test_welcome_arena_wraps(void **state)
{
	struct fake f;
	struct sdr_shm_status *st;
	struct sdr_client_layout L;

	(void)state;
	sdr_client_layout(SDR_CLIENT_SDK, 1 << 20, 1, &L);
	sdr_client_layout(SDR_CLIENT_SDK, 0 - L.arena_off + 4096, 1, &L);
	assert_true(L.arena_len <= SDR_SHM_ARENA_MAX && L.size >= L.arena_off + L.arena_len);
	fake_start(&f, ACT_WRAP);
	st = fake_status(&f, getpid());
	expect_refused(&f, "the segment is not what the welcome said");
	fake_stop(&f, st);
}

/* The segment names another process than the one serving the socket: refused. */
static void
test_socket_of_another_process(void **state)
{
	struct fake f;
	struct sdr_shm_status *st;

	(void)state;
	fake_start(&f, ACT_HONEST);
	st = fake_status(&f, getppid());	/* alive, but not the socket's server */
	expect_refused(&f, "not by the dataplane the status segment names");
	fake_stop(&f, st);
}

/* A status segment of a user who is neither root nor the caller: refused, unless the
 * caller names that user in SDR_DATAPLANE_USER (then the socket's user must match). */
static void
test_segment_of_another_user(void **state)
{
	struct fake f;
	struct sdr_shm_status *st;
	char path[64];
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();		/* (giving a file away needs root) */
	fake_start(&f, ACT_HONEST);
	st = fake_status(&f, getpid());
	snprintf(path, sizeof(path), "%s", f.shm);
	fd = shm_open(path, O_RDWR, 0);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	close(fd);
	expect_refused(&f, "belongs to uid 65534, not to root or to you");
	setenv("SDR_DATAPLANE_USER", "65534", 1);
	expect_refused(&f, "not by the dataplane the status segment names (pid");
	unsetenv("SDR_DATAPLANE_USER");
	fake_stop(&f, st);
}

/* A reply whose length says more than the reply area: the client's copy is bounded and
 * terminated, and a length changed afterwards in the segment changes nothing. */
static void
test_reply_copied_once(void **state)
{
	struct fake f;
	struct sdr_shm_status *st;
	struct sdr_client c;
	char err[256];
	int rc;

	(void)state;
	fake_start(&f, ACT_HONEST);
	st = fake_status(&f, getpid());
	if (sdr_client_attach(f.inst, SDR_CLIENT_SDK, &c, err, sizeof(err)) != 0)
		fail_msg("an honest welcome refused: %s", err);
	c.rpc->req.op = SDR_RPC_IMM;
	rc = sdr_client_call(&c, 5000, err, sizeof(err));
	assert_int_equal(rc, 1);
	assert_int_equal(c.rep->len, SDR_RPC_REPLY_MAX - 1);
	assert_int_equal(c.rep->u.text[SDR_RPC_REPLY_MAX - 1], '\0');
	assert_int_equal(strlen(c.rep->u.text), SDR_RPC_REPLY_MAX - 1);
	c.rpc->rep.len = 7;	/* the other side rewrites it: the copy stays */
	assert_int_equal(c.rep->len, SDR_RPC_REPLY_MAX - 1);
	assert_true(f.served);
	sdr_client_detach(&c);
	fake_stop(&f, st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_welcome_arena_wraps),
		cmocka_unit_test(test_socket_of_another_process),
		cmocka_unit_test(test_segment_of_another_user),
		cmocka_unit_test(test_reply_copied_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
