/* SPDX-License-Identifier: BSD-3-Clause */
/* Message source and sink with verification of every byte. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "msg_pattern.h"
#include "quantile.h"
#include "traffic.h"
#include "units.h"

struct tbuf {
	uint8_t *data;
	uint8_t filled;		/* holds message filled_seq's pattern (verify=no: any one's) */
	uint64_t seq;		/* message number, for the pattern */
	uint64_t filled_seq;
	uint8_t busy;
};

struct traffic {
	struct traffic_cfg cfg;
	struct sdr_ep *ep;
	int send;
	int recv;
	int endless;		/* count = 0: until stopped (a stripe's share of 0 is none) */
	struct tbuf *sbuf;
	uint8_t *sarea;		/* the send buffers, one after the other, whole pages each */
	size_t sarea_len;
	struct tbuf *rbuf;
	uint32_t next_send;	/* next message number to send */
	uint32_t next_recv;	/* next message number to post */
	uint32_t sends_done;
	uint32_t recvs_done;
	double *times;		/* completion times, seconds */
	uint64_t *ends;		/* ... and when each completed (ns, the dataplane's clock) */
	uint32_t ntimes;
	uint32_t times_cap;
	struct traffic_stats st;
};

int
traffic_parse(const char *spec, struct traffic_cfg *c, char *err, size_t errlen)
{
	char buf[512], *save = NULL;
	uint64_t v;

	memset(c, 0, sizeof(*c));
	c->size = 1 << 20;
	c->count = 50;
	c->inflight = 8;
	c->seed = 1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "--traffic: longer than %zu characters", sizeof(buf) - 1);
		return -1;
	}
	strcpy(buf, spec);
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *val;

		if (eq == NULL) {
			snprintf(err, errlen, "--traffic: '%s' is not key=value", kv);
			return -1;
		}
		*eq = '\0';
		val = eq + 1;
		if (strcmp(kv, "size") == 0) {
			if (units_parse_size(val, &c->size) != 0 || c->size == 0 ||
			    c->size > (1ull << 32)) {
				snprintf(err, errlen, "--traffic: size '%s' is not a size from 1 byte "
					 "up to 4GiB", val);
				return -1;
			}
		} else if (strcmp(kv, "count") == 0 || strcmp(kv, "inflight") == 0) {
			if (units_parse_u64(val, 100000000, &v) != 0 || (kv[0] == 'i' && v == 0)) {
				snprintf(err, errlen, "--traffic: %s '%s' is not a count", kv, val);
				return -1;
			}
			*(kv[0] == 'c' ? &c->count : &c->inflight) = (uint32_t)v;
		} else if (strcmp(kv, "seed") == 0) {
			if (units_parse_u64(val, UINT64_MAX, &c->seed) != 0) {
				snprintf(err, errlen, "--traffic: seed '%s' is not an integer", val);
				return -1;
			}
		} else if (strcmp(kv, "scheme") == 0) {
			/* "ec-mds:32,8" carries a comma: take the next token as its m */
			char name[64];

			snprintf(name, sizeof(name), "%s", val);
			if (strchr(val, ':') != NULL && strchr(val, ',') == NULL) {
				char *m = strtok_r(NULL, ",", &save);

				if (m != NULL)
					snprintf(name, sizeof(name), "%s,%s", val, m);
			}
			if (sdr_scheme_parse(name, &c->scheme) != 0) {
				snprintf(err, errlen, "--traffic: scheme '%s' is not sr, sr-nack, "
					 "ec-xor:K,M or ec-mds:K,M", name);
				return -1;
			}
			c->has_scheme = 1;
		} else if (strcmp(kv, "role") == 0) {
			if (strcmp(val, "send") == 0)
				c->role = TRAFFIC_ROLE_SEND;
			else if (strcmp(val, "recv") == 0)
				c->role = TRAFFIC_ROLE_RECV;
			else if (strcmp(val, "both") == 0)
				c->role = TRAFFIC_ROLE_BOTH;
			else if (strcmp(val, "auto") == 0)
				c->role = TRAFFIC_ROLE_AUTO;
			else {
				snprintf(err, errlen, "--traffic: role '%s' is not send, recv, both "
					 "or auto", val);
				return -1;
			}
		} else if (strcmp(kv, "verify") == 0) {
			if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0) {
				snprintf(err, errlen, "--traffic: verify '%s' is not yes or no", val);
				return -1;
			}
			c->no_verify = val[0] == 'n';
		} else if (strcmp(kv, "start") == 0) {
			if (units_parse_number(val, &c->start_mono_s) != 0) {
				snprintf(err, errlen, "--traffic: start '%s' is not a CLOCK_MONOTONIC "
					 "time in seconds", val);
				return -1;
			}
		} else if (strcmp(kv, "log") == 0) {
			if (strlen(val) == 0 || strlen(val) >= sizeof(c->log)) {
				snprintf(err, errlen, "--traffic: log '%s' is not a file name", val);
				return -1;
			}
			strcpy(c->log, val);
		} else if (strcmp(kv, "conn") == 0) {
			if (strlen(val) == 0 || strlen(val) >= sizeof(c->conn)) {
				snprintf(err, errlen, "--traffic: conn '%s' is not a connection name", val);
				return -1;
			}
			strcpy(c->conn, val);
		} else {
			snprintf(err, errlen, "--traffic: unknown key '%s' (expected size, count, "
				 "inflight, scheme, role, seed, conn, log, verify)", kv);
			return -1;
		}
	}
	return 0;
}

struct traffic *
traffic_create(const struct traffic_cfg *cfg, struct sdr_ep *ep, int send, int recv)
{
	struct traffic *t = calloc(1, sizeof(*t));
	uint32_t n = cfg->inflight;

	if (t == NULL)
		return NULL;
	t->cfg = *cfg;
	t->endless = cfg->count == 0;
	if (cfg->stripes > 1) {
		uint32_t s = cfg->stripes;

		/* the connection's count and inflight, shared out as its messages are (a
		 * stripe has one in flight at least, or its messages would never go) */
		t->cfg.count = cfg->count / s + (cfg->count % s > cfg->stripe);
		n = cfg->inflight / s + (cfg->inflight % s > cfg->stripe);
		if (n == 0)
			n = 1;
	}
	t->cfg.inflight = n;
	t->ep = ep;
	t->send = send;
	t->recv = recv;
	t->sbuf = calloc(n, sizeof(*t->sbuf));
	t->rbuf = calloc(n, sizeof(*t->rbuf));
	t->times_cap = cfg->count ? 2 * cfg->count : 1u << 20;
	t->times = calloc(t->times_cap, sizeof(double));
	t->ends = calloc(t->times_cap, sizeof(uint64_t));
	if (!t->sbuf || !t->rbuf || !t->times || !t->ends)
		goto fail;
	/*
	 * The send buffers in one area of whole pages, each on pages of its own: what a
	 * device that reads them by DMA has mapped (dma.h), as an RDMA application registers
	 * its memory. Written once here, as such an application does before it measures
	 * (registration pins them): not a page fault per packet on the first messages.
	 */
	if (send) {
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);
		size_t stride = (cfg->size + 8 + pg - 1) / pg * pg;
		void *a = mmap(NULL, stride * n, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (a == MAP_FAILED)
			goto fail;
		t->sarea = a;
		t->sarea_len = stride * n;
		memset(t->sarea, 0, t->sarea_len);
		for (uint32_t i = 0; i < n; i++)
			t->sbuf[i].data = t->sarea + (size_t)i * stride;
	}
	for (uint32_t i = 0; recv && i < n; i++) {
		if ((t->rbuf[i].data = malloc(cfg->size + 8)) == NULL)
			goto fail;
		memset(t->rbuf[i].data, 0, cfg->size + 8);
	}
	return t;
fail:
	traffic_destroy(t);
	return NULL;
}

int
traffic_send_area(const struct traffic *t, void **va, size_t *len)
{
	if (t == NULL || t->sarea == NULL)
		return -1;
	*va = t->sarea;
	*len = t->sarea_len;
	return 0;
}

void
traffic_destroy(struct traffic *t)
{
	if (t == NULL)
		return;
	if (t->sarea != NULL)
		munmap(t->sarea, t->sarea_len);
	for (uint32_t i = 0; t->rbuf && i < t->cfg.inflight; i++)
		free(t->rbuf[i].data);
	free(t->sbuf);
	free(t->rbuf);
	free(t->times);
	free(t->ends);
	free(t);
}

static void
record(struct traffic *t, double s, uint64_t end_ns)
{
	uint64_t us = (uint64_t)(s * 1e6);
	unsigned int b = 0;

	while (us > 1 && b + 1 < TRAFFIC_HIST_BUCKETS) {
		us >>= 1;
		b++;
	}
	t->st.hist[b]++;
	if (t->ntimes < t->times_cap) {
		t->ends[t->ntimes] = end_ns;
		t->times[t->ntimes++] = s;
	}
}

/* The connection's number of this stripe's message @p k (the pattern's and immediate's). */
static uint64_t
msg_number(const struct traffic *t, uint32_t k)
{
	return t->cfg.stripes > 1 ? t->cfg.stripe + (uint64_t)k * t->cfg.stripes : k;
}

static int
more(const struct traffic *t, uint32_t issued)
{
	return t->endless || issued < t->cfg.count;
}

static void
on_done(struct traffic *t, const struct sdr_ep_done *d)
{
	/* from the first chunk on the wire (send) or in (receive): waiting for the peer to
	 * post, or for earlier messages, is not the message's completion time */
	uint64_t start = d->first_ns ? d->first_ns : d->start_ns;
	double s = (double)(d->end_ns - start) * 1e-9;

	if (t->st.first_ns == 0 || start < t->st.first_ns)
		t->st.first_ns = start;
	if (d->end_ns > t->st.last_ns)
		t->st.last_ns = d->end_ns;
	if (!d->is_recv) {
		struct tbuf *b = &t->sbuf[d->cookie];

		b->busy = 0;
		t->sends_done++;
		if (d->status == SDR_DONE_OK) {
			t->st.sent++;
			t->st.bytes += t->cfg.size;
			record(t, s, d->end_ns);
		} else {
			t->st.send_failed++;
		}
		t->st.retransmitted += d->retransmitted;
		t->st.fallback += d->fallback;
		return;
	}
	{
		static const uint8_t zero[8];
		struct tbuf *b = &t->rbuf[d->cookie];
		uint32_t imm;
		/* every byte, and the 8 past the end untouched (zeroed at the start) */
		int ok = d->status == SDR_DONE_OK && !t->cfg.no_verify &&
			 sdr_pattern_check(b->data, t->cfg.size, t->cfg.seed, b->seq) &&
			 memcmp(b->data + t->cfg.size, zero, sizeof(zero)) == 0;

		if (!b->busy) {
			/* a completion for a receive not posted (a second one for it): wrong */
			t->st.corrupt++;
			return;
		}
		t->recvs_done++;
		t->st.received++;
		t->st.decoded += d->decoded;
		/* the user immediate, when every fragment made it (decoding may hide one) */
		if (ok && sdr_ep_recv_imm(t->ep, d->slot, &imm) == 0) {
			uint32_t nfr = sdr_imm_nfrags(&sdr_ep_config(t->ep)->attr.split);
			uint32_t npkts = (uint32_t)((t->cfg.size + sdr_ep_config(t->ep)->attr.mtu - 1) /
						    sdr_ep_config(t->ep)->attr.mtu);
			uint32_t want = sdr_pattern_imm(t->cfg.seed, b->seq);

			if (npkts < nfr)	/* short messages carry only their fragments */
				want &= (uint32_t)((1ull << (npkts * sdr_ep_config(t->ep)->attr.split.frag_bits)) - 1);
			ok = imm == want;
		}
		if (d->status != SDR_DONE_OK)
			t->st.recv_failed++;
		else if (t->cfg.no_verify)
			t->st.unchecked++;
		else if (ok)
			t->st.verified++;
		else
			t->st.corrupt++;
		if (!t->send) {
			if (d->status == SDR_DONE_OK)
				t->st.bytes += t->cfg.size;
			record(t, s, d->end_ns);
		}
		sdr_ep_recv_release(t->ep, d->slot);
		b->busy = 0;
	}
}

unsigned int
traffic_step(struct traffic *t, uint64_t now)
{
	struct sdr_ep_done d;
	unsigned int work = 0;

	while (sdr_ep_poll(t->ep, &d)) {
		on_done(t, &d);
		work++;
	}
	for (uint32_t i = 0; t->recv && i < t->cfg.inflight && more(t, t->next_recv); i++) {
		struct tbuf *b = &t->rbuf[i];
		uint32_t slot;

		if (b->busy)
			continue;
		b->seq = msg_number(t, t->next_recv);
		memset(b->data, 0, t->cfg.size > 64 ? 64 : t->cfg.size);
		if (sdr_ep_recv(t->ep, b->data, t->cfg.size, NULL, i, now, &slot) != 0)
			break;
		b->busy = 1;
		t->next_recv++;
		work++;
	}
	for (uint32_t i = 0; t->send && now >= t->cfg.start_ns && i < t->cfg.inflight &&
	     more(t, t->next_send); i++) {
		struct tbuf *b = &t->sbuf[i];

		if (b->busy)
			continue;
		b->seq = msg_number(t, t->next_send);
		/* once per message, even when the send must wait (verify=no: the bytes of the
		 * buffer's first message, again, a sender whose payloads are ready, as sdr-gen's
		 * --payload-span; nobody checks them) */
		if (!b->filled || (!t->cfg.no_verify && b->filled_seq != b->seq)) {
			sdr_pattern_fill(b->data, 0, t->cfg.size, t->cfg.seed, b->seq);
			b->filled = 1;
			b->filled_seq = b->seq;
			work++;
		}
		if (sdr_ep_send(t->ep, b->data, t->cfg.size, sdr_pattern_imm(t->cfg.seed, b->seq), i,
				now) != 0)
			break;
		b->busy = 1;
		t->next_send++;
		work++;
	}
	return work;
}

int
traffic_done(const struct traffic *t)
{
	if (t->endless)
		return 0;
	return (!t->send || t->sends_done >= t->cfg.count) &&
	       (!t->recv || t->recvs_done >= t->cfg.count);
}

int
traffic_ok(const struct traffic *t)
{
	return t->st.send_failed == 0 && t->st.recv_failed == 0 && t->st.corrupt == 0 &&
	       (!t->recv || t->st.verified + t->st.unchecked == t->st.received);
}

const struct traffic_stats *
traffic_stats(const struct traffic *t)
{
	return &t->st;
}

int
traffic_verifies(const struct traffic *t)
{
	return !t->cfg.no_verify;
}

struct traffic *
traffic_join(struct traffic *const *parts, unsigned int n)
{
	struct traffic *t = n ? calloc(1, sizeof(*t)) : NULL;
	uint32_t cap = 0;

	if (t == NULL)
		return NULL;
	for (unsigned int i = 0; i < n; i++)
		cap += parts[i]->ntimes;
	t->times = calloc(cap ? cap : 1, sizeof(double));
	t->ends = calloc(cap ? cap : 1, sizeof(uint64_t));
	if (t->times == NULL || t->ends == NULL) {
		free(t->times);
		free(t->ends);
		free(t);
		return NULL;
	}
	t->times_cap = cap;
	t->cfg = parts[0]->cfg;
	t->cfg.count = 0;
	t->cfg.inflight = 0;	/* no buffers */
	t->cfg.stripe = t->cfg.stripes = 0;
	t->send = parts[0]->send;
	t->recv = parts[0]->recv;
	t->endless = parts[0]->endless;
	for (unsigned int i = 0; i < n; i++) {
		const struct traffic *p = parts[i];
		const struct traffic_stats *ps = &p->st;

		t->cfg.count += p->cfg.count;
		t->sends_done += p->sends_done;
		t->recvs_done += p->recvs_done;
		memcpy(t->times + t->ntimes, p->times, p->ntimes * sizeof(double));
		memcpy(t->ends + t->ntimes, p->ends, p->ntimes * sizeof(uint64_t));
		t->ntimes += p->ntimes;
		t->st.sent += ps->sent;
		t->st.send_failed += ps->send_failed;
		t->st.received += ps->received;
		t->st.verified += ps->verified;
		t->st.unchecked += ps->unchecked;
		t->st.corrupt += ps->corrupt;
		t->st.recv_failed += ps->recv_failed;
		t->st.bytes += ps->bytes;
		t->st.retransmitted += ps->retransmitted;
		t->st.decoded += ps->decoded;
		t->st.fallback += ps->fallback;
		if (ps->first_ns && (t->st.first_ns == 0 || ps->first_ns < t->st.first_ns))
			t->st.first_ns = ps->first_ns;
		if (ps->last_ns > t->st.last_ns)
			t->st.last_ns = ps->last_ns;
		for (int b = 0; b < TRAFFIC_HIST_BUCKETS; b++)
			t->st.hist[b] += ps->hist[b];
	}
	return t;
}

double
traffic_percentile(const struct traffic *t, double q)
{
	double *v, res;

	if (t->ntimes == 0)
		return 0;
	v = malloc(t->ntimes * sizeof(double));
	if (v == NULL)
		return 0;
	memcpy(v, t->times, t->ntimes * sizeof(double));
	sdr_sort_doubles(v, t->ntimes);
	res = sdr_quantile_sorted(v, t->ntimes, q);
	free(v);
	return res;
}

double
traffic_mean(const struct traffic *t)
{
	double s = 0;

	for (uint32_t i = 0; i < t->ntimes; i++)
		s += t->times[i];
	return t->ntimes ? s / t->ntimes : 0;
}

double
traffic_goodput_gbps(const struct traffic *t)
{
	if (t->st.last_ns <= t->st.first_ns)
		return 0;
	return (double)t->st.bytes * 8 / (double)(t->st.last_ns - t->st.first_ns);
}

uint32_t
traffic_expected(const struct traffic *t)
{
	return t->cfg.count * (uint32_t)((t->send != 0) + (t->recv != 0));
}

uint32_t
traffic_completed(const struct traffic *t)
{
	return (t->send ? t->sends_done : 0) + (t->recv ? t->recvs_done : 0);
}

int
traffic_write_log(const struct traffic *t, const char *path)
{
	FILE *f = fopen(path, "w");
	uint64_t t0 = t->st.first_ns;

	if (f == NULL)
		return -1;
	fprintf(f, "# end_s completion_s (seconds since the first message started)\n");
	for (uint32_t i = 0; i < t->ntimes; i++)
		fprintf(f, "%.6f %.6f\n", t->ends[i] >= t0 ? (double)(t->ends[i] - t0) * 1e-9 : 0.0,
			t->times[i]);
	return fclose(f);
}
