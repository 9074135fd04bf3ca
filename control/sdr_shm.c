/* SPDX-License-Identifier: BSD-3-Clause */
/* The control segment: create, attach, client slots, commands, stats snapshots. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_ring_elem.h>

#include "sdr_shm.h"

#define ALIGN64(x) (((x) + 63u) & ~(uint64_t)63u)
#define CMD_RING_SIZE 64

uint64_t
sdr_shm_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int
sdr_shm_path(const char *instance, char *path, size_t len)
{
	if (strchr(instance, '/') != NULL || instance[0] == '\0' ||
	    (size_t)snprintf(path, len, "/sdr-%s", instance) >= len)
		return -1;
	return 0;
}

/* Where everything goes: offsets from the start of the segment, from the arena size. */
struct shm_layout {
	uint64_t cmd_ring_off;
	uint64_t clients_off;
	uint64_t queues_off;		/* client i: sq at queues_off + i * qpair, cq after it */
	uint64_t sq_size;
	uint64_t qpair;
	uint64_t stats_off;
	uint64_t arena_off;
	uint64_t arena_share;		/* bytes of the arena per client */
	uint64_t total;
};

static void
compute_layout(struct shm_layout *L, uint64_t arena_size)
{
	uint64_t off = ALIGN64(sizeof(struct sdr_shm_hdr));

	L->cmd_ring_off = off;
	off += ALIGN64((uint64_t)rte_ring_get_memsize_elem(sizeof(uint32_t), CMD_RING_SIZE));
	L->clients_off = off;
	off += ALIGN64(sizeof(struct sdr_shm_client) * SDR_SHM_MAX_CLIENTS);
	L->sq_size = ALIGN64((uint64_t)rte_ring_get_memsize_elem(sizeof(struct sdr_sdk_req),
								 SDR_SHM_QUEUE_DEPTH));
	L->qpair = L->sq_size + ALIGN64((uint64_t)rte_ring_get_memsize_elem(
		sizeof(struct sdr_sdk_cqe), SDR_SHM_QUEUE_DEPTH));
	L->queues_off = off;
	off += L->qpair * SDR_SHM_MAX_CLIENTS;
	L->stats_off = off;
	off += ALIGN64(sizeof(struct sdr_shm_stats));
	L->arena_off = (off + 4095) & ~4095ull;
	L->arena_share = (arena_size / SDR_SHM_SDK_CLIENTS) & ~4095ull;
	L->total = L->arena_off + L->arena_share * SDR_SHM_SDK_CLIENTS;
}

struct sdr_shm_hdr *
sdr_shm_create(const char *instance, uint64_t arena_size, char *err, size_t errlen)
{
	char path[SDR_SHM_NAME_MAX + 8];
	struct sdr_shm_hdr *h;
	struct shm_layout L;
	struct timespec ts;
	int fd;

	if (sdr_shm_path(instance, path, sizeof(path)) != 0) {
		snprintf(err, errlen, "bad instance name '%s'", instance);
		return NULL;
	}
	compute_layout(&L, arena_size);
	/* a segment left by a dataplane that died is replaced */
	shm_unlink(path);
	fd = shm_open(path, O_CREAT | O_EXCL | O_RDWR, 0660);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create shared memory %s: %s", path, strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, (off_t)L.total) != 0 ||
	    (h = mmap(NULL, L.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		snprintf(err, errlen, "cannot size or map %s (%llu bytes): %s", path,
			 (unsigned long long)L.total, strerror(errno));
		close(fd);
		shm_unlink(path);
		return NULL;
	}
	close(fd);
	h->magic = SDR_SHM_MAGIC;
	h->version = SDR_SHM_VERSION;
	h->hdr_size = sizeof(*h);
	h->total_size = L.total;
	snprintf(h->name, sizeof(h->name), "%s", instance);
	h->dp_pid = getpid();
	clock_gettime(CLOCK_REALTIME, &ts);
	h->epoch = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	h->heartbeat_ns = sdr_shm_mono_ns();
	h->cmd_ring_off = L.cmd_ring_off;
	h->clients_off = L.clients_off;
	h->stats_off = L.stats_off;
	h->arena_off = L.arena_off;
	h->arena_size = L.arena_share * SDR_SHM_SDK_CLIENTS;
	for (unsigned int i = 0; i < SDR_SHM_MAX_CLIENTS; i++) {
		struct sdr_shm_client *c = sdr_shm_client(h, i);

		c->sq_off = L.queues_off + i * L.qpair;
		c->cq_off = c->sq_off + L.sq_size;
		c->arena_off = i < SDR_SHM_SDK_CLIENTS ? L.arena_off + i * L.arena_share : 0;
		c->arena_len = i < SDR_SHM_SDK_CLIENTS ? L.arena_share : 0;
	}
	if (rte_ring_init(sdr_shm_cmd_ring(h), "sdr_cmd", CMD_RING_SIZE, RING_F_SC_DEQ) != 0) {
		snprintf(err, errlen, "cannot initialise the command ring");
		sdr_shm_destroy(h);
		return NULL;
	}
	h->alive = 1;
	return h;
}

void
sdr_shm_destroy(struct sdr_shm_hdr *h)
{
	char path[SDR_SHM_NAME_MAX + 8];

	if (h == NULL)
		return;
	h->alive = 0;
	if (sdr_shm_path(h->name, path, sizeof(path)) == 0)
		shm_unlink(path);
	munmap(h, h->total_size);
}

struct sdr_shm_hdr *
sdr_shm_attach(const char *instance, char *err, size_t errlen)
{
	char path[SDR_SHM_NAME_MAX + 8];
	struct sdr_shm_hdr *h;
	struct stat st;
	int fd;

	if (sdr_shm_path(instance, path, sizeof(path)) != 0) {
		snprintf(err, errlen, "bad instance name '%s'", instance);
		return NULL;
	}
	fd = shm_open(path, O_RDWR, 0);
	if (fd < 0) {
		snprintf(err, errlen, "no dataplane instance '%s' (%s: %s)", instance, path,
			 strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(*h)) {
		snprintf(err, errlen, "instance '%s': control segment too small", instance);
		close(fd);
		return NULL;
	}
	h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED) {
		snprintf(err, errlen, "instance '%s': cannot map: %s", instance, strerror(errno));
		return NULL;
	}
	if (h->magic != SDR_SHM_MAGIC || h->total_size != (uint64_t)st.st_size) {
		snprintf(err, errlen, "instance '%s': not an SDR control segment", instance);
		munmap(h, (size_t)st.st_size);
		return NULL;
	}
	if (h->version != SDR_SHM_VERSION || h->hdr_size != sizeof(*h)) {
		snprintf(err, errlen, "instance '%s' speaks control version %u, this program "
			 "speaks %u: use the tools of the same build as the dataplane", instance,
			 h->version, SDR_SHM_VERSION);
		munmap(h, (size_t)st.st_size);
		return NULL;
	}
	return h;
}

void
sdr_shm_detach(struct sdr_shm_hdr *h)
{
	if (h != NULL)
		munmap(h, h->total_size);
}

uint64_t
sdr_shm_age_ns(const volatile uint64_t *stamp)
{
	uint64_t t = __atomic_load_n(stamp, __ATOMIC_ACQUIRE);
	uint64_t now = sdr_shm_mono_ns();

	return now > t ? now - t : 0;
}

int
sdr_shm_dp_alive(const struct sdr_shm_hdr *h)
{
	return h->alive && sdr_shm_age_ns(&h->heartbeat_ns) < 2000000000ull &&
	       (kill(h->dp_pid, 0) == 0 || errno == EPERM);
}

int
sdr_shm_claim(struct sdr_shm_hdr *h, int sdk)
{
	unsigned int lo = sdk ? 0 : SDR_SHM_SDK_CLIENTS, hi = sdk ? SDR_SHM_SDK_CLIENTS :
							      SDR_SHM_MAX_CLIENTS;

	for (unsigned int i = lo; i < hi; i++) {
		struct sdr_shm_client *c = sdr_shm_client(h, i);
		uint32_t free_state = SDR_CLIENT_FREE;

		if (!__atomic_compare_exchange_n(&c->state, &free_state, SDR_CLIENT_CLAIMING, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		c->pid = getpid();
		c->start_time = sdr_shm_proc_start(c->pid);
		c->lease_ns = sdr_shm_mono_ns();
		c->cmd_seq = c->reply_seq = 0;
		c->sdk_conns = 0;
		rte_ring_init(sdr_shm_at(h, c->sq_off), "sdr_sq", SDR_SHM_QUEUE_DEPTH,
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
		rte_ring_init(sdr_shm_at(h, c->cq_off), "sdr_cq", SDR_SHM_QUEUE_DEPTH,
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
		/* only now may the dataplane look at it (it ignores CLAIMING slots) */
		__atomic_store_n(&c->state, SDR_CLIENT_ACTIVE, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -1;
}

void
sdr_shm_release(struct sdr_shm_hdr *h, int slot)
{
	uint32_t id = (uint32_t)slot;

	if (slot < 0 || slot >= SDR_SHM_MAX_CLIENTS)
		return;
	__atomic_store_n(&sdr_shm_client(h, id)->state, SDR_CLIENT_CLOSING, __ATOMIC_RELEASE);
	/* a nudge so the slot is freed at once; if the ring is full the dataplane's periodic
	 * sweep finds it */
	rte_ring_mp_enqueue_elem(sdr_shm_cmd_ring(h), &id, sizeof(id));
}

uint64_t
sdr_shm_proc_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the name may hold spaces and parentheses: fields count from the last ')' */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
				"%*d %*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

int
sdr_shm_client_alive(const struct sdr_shm_client *c)
{
	uint64_t st;

	if (c->pid <= 0 || (kill(c->pid, 0) != 0 && errno == ESRCH))
		return 0;
	st = sdr_shm_proc_start(c->pid);
	return st == 0 || c->start_time == 0 || st == c->start_time;
}

void
sdr_shm_free_slot(struct sdr_shm_hdr *h, unsigned int slot)
{
	struct sdr_shm_client *c = sdr_shm_client(h, slot);

	c->pid = 0;
	c->sdk_conns = 0;
	__atomic_store_n(&c->state, SDR_CLIENT_FREE, __ATOMIC_RELEASE);
}

int
sdr_shm_command(struct sdr_shm_hdr *h, int slot, const char *cmd, uint32_t flags,
		unsigned int timeout_ms, const char **reply)
{
	struct sdr_shm_client *c = sdr_shm_client(h, (unsigned int)slot);
	uint64_t deadline = sdr_shm_mono_ns() + (uint64_t)timeout_ms * 1000000;
	uint32_t seq, id = (uint32_t)slot;

	if (strlen(cmd) >= SDR_SHM_CMD_LEN) {
		snprintf(c->reply, SDR_SHM_REPLY_LEN, "command longer than %d characters",
			 SDR_SHM_CMD_LEN - 1);
		*reply = c->reply;
		return SDR_CTL_BAD_INPUT;
	}
	strcpy(c->cmd, cmd);
	c->cmd_flags = flags;
	c->lease_ns = sdr_shm_mono_ns();
	seq = c->cmd_seq + 1;
	__atomic_store_n(&c->cmd_seq, seq, __ATOMIC_RELEASE);
	while (rte_ring_mp_enqueue_elem(sdr_shm_cmd_ring(h), &id, sizeof(id)) != 0) {
		if (sdr_shm_mono_ns() > deadline)
			goto timeout;
		usleep(200);
	}
	while (__atomic_load_n(&c->reply_seq, __ATOMIC_ACQUIRE) != seq) {
		if (sdr_shm_mono_ns() > deadline || !sdr_shm_dp_alive(h))
			goto timeout;
		usleep(200);
	}
	*reply = c->reply;
	return c->reply_rc;
timeout:
	snprintf(c->reply, SDR_SHM_REPLY_LEN, "dataplane '%s' (pid %d) %s", h->name, h->dp_pid,
		 sdr_shm_dp_alive(h) ? "did not answer in time" : "is not running");
	*reply = c->reply;
	return -1;
}

int
sdr_shm_read_stats(const struct sdr_shm_hdr *h, struct sdr_shm_stats *out)
{
	const struct sdr_shm_stats *s = sdr_shm_stats(h);

	for (int tries = 0; tries < 1000; tries++) {
		uint64_t a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE), b;

		if (a & 1) {
			usleep(50);
			continue;
		}
		memcpy(out, (const void *)s, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		b = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (a == b)
			return 0;
	}
	return -1;
}
