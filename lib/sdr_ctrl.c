/* SPDX-License-Identifier: BSD-3-Clause */
/* SDR control messages: encode and validating decode. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "roce_hdr.h"
#include "sdr_ctrl.h"
#include "sdr_zero.h"

static const char *const err_names[SDR_CTRL_E_COUNT] = {
	[SDR_CTRL_OK] = "ok",
#define X(sym, name, doc) [SDR_CTRL_E_##sym] = name,
	SDR_CTRL_ERRORS(X)
#undef X
};

static const char *const err_docs[SDR_CTRL_E_COUNT] = {
	[SDR_CTRL_OK] = "ok",
#define X(sym, name, doc) [SDR_CTRL_E_##sym] = doc,
	SDR_CTRL_ERRORS(X)
#undef X
};

static const char *const route_names[SDR_ROUTE_COUNT] = {
#define X(sym, name, doc) [SDR_ROUTE_##sym] = name,
	SDR_CTRL_ROUTES(X)
#undef X
};

enum sdr_ctrl_route
sdr_ctrl_route(const struct sdr_ctrl *c)
{
	int answer = (c->flags & SDR_CTRL_F_ANSWER) != 0;

	switch (c->type) {
	case SDR_CTRL_SKIP:
		return answer ? SDR_ROUTE_SEND : SDR_ROUTE_SKIP;
	case SDR_CTRL_WITHDRAW:
		return answer ? SDR_ROUTE_WITHDRAWN : SDR_ROUTE_SEND;
	case SDR_CTRL_REPORT:
		return SDR_ROUTE_REPORT;
	case SDR_CTRL_PATHS:
		return SDR_ROUTE_PATHS;
	case SDR_CTRL_SCHEME:
		return SDR_ROUTE_SCHEME;
	case SDR_CTRL_SYNC:
		return answer ? SDR_ROUTE_SYNC_ANSWER : SDR_ROUTE_SYNC;
	case SDR_CTRL_HELLO:
		return SDR_ROUTE_HELLO;
	default:	/* ACK, NACK, EC-NACK, CTS */
		return SDR_ROUTE_SEND;
	}
}

const char *
sdr_ctrl_route_name(enum sdr_ctrl_route r)
{
	return (unsigned int)r < SDR_ROUTE_COUNT ? route_names[r] : "invalid";
}

const char *
sdr_ctrl_err_name(int err)
{
	err = err < 0 ? -err : err;
	return err < SDR_CTRL_E_COUNT ? err_names[err] : "ctrl_invalid";
}

const char *
sdr_ctrl_strerror(int err)
{
	err = err < 0 ? -err : err;
	return err < SDR_CTRL_E_COUNT ? err_docs[err] : "invalid error";
}

const char *
sdr_ctrl_type_name(uint8_t type)
{
	switch (type) {
	case SDR_CTRL_ACK: return "ACK";
	case SDR_CTRL_NACK: return "NACK";
	case SDR_CTRL_EC_NACK: return "EC-NACK";
	case SDR_CTRL_CTS: return "CTS";
	case SDR_CTRL_SKIP: return "SKIP";
	case SDR_CTRL_WITHDRAW: return "WITHDRAW";
	case SDR_CTRL_SYNC: return "SYNC";
	case SDR_CTRL_HELLO: return "HELLO";
	case SDR_CTRL_REPORT: return "REPORT";
	case SDR_CTRL_SCHEME: return "SCHEME";
	case SDR_CTRL_PATHS: return "PATHS";
	default: return "?";
	}
}

int
sdr_ctrl_encode(const struct sdr_ctrl *c, uint8_t *buf, size_t cap)
{
	size_t len = SDR_CTRL_HDR_LEN + 4u * c->nwords;

	if (c->nwords > SDR_CTRL_MAX_WORDS)
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	buf[0] = SDR_CTRL_VERSION;
	buf[1] = c->type;
	buf[2] = c->gen;
	buf[3] = c->nwords;
	roce_put16(buf + 4, c->msg_id);
	roce_put16(buf + 6, c->flags);
	roce_put32(buf + 8, c->cum);
	roce_put32(buf + 12, c->win_start);
	roce_put64(buf + 16, c->value);
	roce_put64(buf + 24, c->dst_tag);
	roce_put64(buf + 32, c->src_tag);
	for (unsigned int i = 0; i < c->nwords; i++)
		roce_put32(buf + SDR_CTRL_HDR_LEN + 4 * i, c->win[i]);
	return (int)len;
}

/* The flags a type may carry. */
static uint16_t
type_flags(uint8_t type)
{
	switch (type) {
	case SDR_CTRL_ACK: return SDR_CTRL_F_COMPLETE | SDR_CTRL_F_FAILED;
	case SDR_CTRL_SKIP:
	case SDR_CTRL_WITHDRAW:
	case SDR_CTRL_SYNC:
	case SDR_CTRL_HELLO: return SDR_CTRL_F_ANSWER;
	case SDR_CTRL_SCHEME: return SDR_CTRL_F_ANSWER | SDR_CTRL_F_REFUSED;
	default: return 0;
	}
}

unsigned int
sdr_ctrl_hold_code(uint64_t ns)
{
	double c;

	if (ns < 1000)
		return 0;
	c = 1 + floor(8 * log2((double)ns / 1000));
	return c > 127 ? 127 : (unsigned int)c;
}

uint64_t
sdr_ctrl_hold_ns(unsigned int code)
{
	if (code == 0)
		return 0;
	return (uint64_t)(1000 * exp2((double)((code > 127 ? 127 : code) - 1) / 8));
}

int
sdr_ctrl_decode(const uint8_t *buf, size_t len, struct sdr_ctrl *c)
{
	if (len < SDR_CTRL_HDR_LEN)
		return -SDR_CTRL_E_SHORT;
	if (buf[0] != SDR_CTRL_VERSION)
		return -SDR_CTRL_E_VERSION;
	if (buf[1] < SDR_CTRL_ACK || buf[1] > SDR_CTRL_PATHS)
		return -SDR_CTRL_E_TYPE;
	if (buf[3] > SDR_CTRL_MAX_WORDS)
		return -SDR_CTRL_E_WORDS;
	if (len != SDR_CTRL_HDR_LEN + 4u * buf[3])
		return -SDR_CTRL_E_LENGTH;
	sdr_zero(c, sizeof(*c));
	c->type = buf[1];
	c->gen = buf[2];
	c->nwords = buf[3];
	c->msg_id = roce_get16(buf + 4);
	c->flags = roce_get16(buf + 6);
	c->cum = roce_get32(buf + 8);
	c->win_start = roce_get32(buf + 12);
	c->value = roce_get64(buf + 16);
	c->dst_tag = roce_get64(buf + 24);
	c->src_tag = roce_get64(buf + 32);
	if ((c->flags & ~type_flags(c->type)) != 0)
		return -SDR_CTRL_E_FLAGS;
	/* (a HELLO's window is of message numbers, which wrap modulo 2^32) */
	if (c->type != SDR_CTRL_HELLO && (uint64_t)c->win_start + 32u * c->nwords > 0x100000000ull)
		return -SDR_CTRL_E_RANGE;
	if ((c->type != SDR_CTRL_CTS && c->type != SDR_CTRL_SYNC && c->type != SDR_CTRL_REPORT &&
	     c->type != SDR_CTRL_SCHEME && c->type != SDR_CTRL_HELLO && c->value >> 32 != 0) ||
	    (c->type == SDR_CTRL_PATHS && c->value != 0) ||
	    ((c->type == SDR_CTRL_CTS || c->type == SDR_CTRL_SKIP ||
	      c->type == SDR_CTRL_WITHDRAW || c->type == SDR_CTRL_SYNC ||
	      c->type == SDR_CTRL_REPORT ||
	      c->type == SDR_CTRL_SCHEME) && c->nwords) ||
	    (c->type == SDR_CTRL_PATHS && (c->nwords == 0 || c->nwords % 2 != 0)) ||
	    (c->type == SDR_CTRL_HELLO && c->nwords != 0 &&
	     c->nwords <= SDR_CTRL_HELLO_TAG_WORDS))
		return -SDR_CTRL_E_VALUE;
	if (c->src_tag == 0)
		return -SDR_CTRL_E_TAG;
	for (unsigned int i = 0; i < c->nwords; i++)
		c->win[i] = roce_get32(buf + SDR_CTRL_HDR_LEN + 4 * i);
	return 0;
}
