/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit parsing for command lines and configuration files. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

struct suffix {
	const char *s;
	double mult;
};

/*
 * strtod() also reads hexadecimal (0x1p12), infinity and nan: a number here is decimal
 * digits with an optional fraction and exponent, nothing else.
 */
static int
decimal(const char *s, const char *end)
{
	for (const char *p = s; p < end; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' && *p != 'E' &&
		    !((*p == '-' || *p == '+') && p > s && (p[-1] == 'e' || p[-1] == 'E')))
			return 0;
	return 1;
}

/*
 * Number followed by a suffix from @p table (matched case-sensitively, whole rest); @p mult,
 * if not NULL, is set to the suffix's multiplier and @p digits to where the number ends
 * when it is digits only (an integer), else NULL.
 */
static int
parse_with_suffix(const char *s, const struct suffix *table, double *out, double *mult,
		  const char **digits)
{
	char *end;
	double v;

	/* strtod() would skip any leading white space (\t, \v, ...) and then take a sign */
	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v) || v < 0 || !decimal(s, end))
		return -EINVAL;
	for (const struct suffix *t = table; t->s != NULL; t++) {
		if (strcmp(end, t->s) == 0) {
			*out = v * t->mult;
			if (mult != NULL)
				*mult = t->mult;
			if (digits != NULL) {
				*digits = end;
				for (const char *p = s; p < end; p++)
					if (!isdigit((unsigned char)*p))
						*digits = NULL;
			}
			return 0;
		}
	}
	return -EINVAL;
}

int
units_parse_size(const char *s, uint64_t *bytes)
{
	static const struct suffix t[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1024.0 }, { "k", 1024.0 }, { "KiB", 1024.0 }, { "KB", 1024.0 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 }, { "MB", 1048576.0 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1073741824.0 },
		{ "T", 1099511627776.0 }, { "TiB", 1099511627776.0 },
		{ NULL, 0 },
	};
	const char *digits;
	double v, mult;

	if (parse_with_suffix(s, t, &v, &mult, &digits) != 0)
		return -EINVAL;
	if (digits != NULL) {
		/* a whole number: in integers, exact beyond 2^53 where a double is not */
		unsigned long long n;
		uint64_t m = (uint64_t)mult;
		char *end;

		errno = 0;
		n = strtoull(s, &end, 10);
		if (errno != 0 || end != digits || (n != 0 && m > UINT64_MAX / n))
			return -EINVAL;
		*bytes = (uint64_t)n * m;
		return 0;
	}
	if (v >= 18446744073709551616.0 || v != floor(v))
		return -EINVAL;
	*bytes = (uint64_t)v;
	return 0;
}

int
units_parse_number(const char *s, double *v)
{
	static const struct suffix t[] = { { "", 1 }, { NULL, 0 } };

	return parse_with_suffix(s, t, v, NULL, NULL);
}

int
units_parse_time(const char *s, double *seconds)
{
	static const struct suffix t[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 },
		{ NULL, 0 },
	};

	return parse_with_suffix(s, t, seconds, NULL, NULL);
}

int
units_parse_rate(const char *s, double *bits_per_s)
{
	static const char *const unit[] = { "", "bit", "bps", "b/s", "bit/s", NULL };
	static const struct {
		char c;
		double m;
	} mult[] = { { 0, 1 }, { 'K', 1e3 }, { 'k', 1e3 }, { 'M', 1e6 }, { 'G', 1e9 }, { 'T', 1e12 } };
	char buf[32];
	double v;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || strlen(s) >= sizeof(buf))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v) || v < 0 || !decimal(s, end))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(mult) / sizeof(mult[0]); i++) {
		const char *rest = end;

		if (mult[i].c != 0) {
			if (*rest != mult[i].c)
				continue;
			rest++;
		}
		for (const char *const *u = unit; *u != NULL; u++) {
			if (strcmp(rest, *u) == 0) {
				*bits_per_s = v * mult[i].m;
				return 0;
			}
		}
	}
	return -EINVAL;
}

int
units_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtod() would skip any leading white space (\t, \v, ...) and then take a sign */
	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	/* decimal, or hexadecimal after 0x: a leading 0 is not octal (0300 is 300, not 192) */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return -EINVAL;
		errno = 0;
		v = strtoull(s + 2, &end, 16);
	} else {
		errno = 0;
		v = strtoull(s, &end, 10);
	}
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int
units_parse_prob(const char *s, double *p)
{
	static const struct suffix t[] = { { "", 1 }, { "%", 0.01 }, { NULL, 0 } };
	double v;

	if (parse_with_suffix(s, t, &v, NULL, NULL) != 0 || v > 1.0)
		return -EINVAL;
	*p = v;
	return 0;
}

const char *
units_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const name[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int i = 0;
	double v = (double)bytes;

	while (v >= 1024.0 && i < 4) {
		v /= 1024.0;
		i++;
	}
	if (v == floor(v))
		snprintf(buf, len, "%.0f%s", v, name[i]);
	else
		snprintf(buf, len, "%.3g%s", v, name[i]);
	return buf;
}

const char *
units_fmt_time(double s, char *buf, size_t len)
{
	if (s >= 1.0)
		snprintf(buf, len, "%.3gs", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3gms", s * 1e3);
	else if (s >= 1e-6)
		snprintf(buf, len, "%.3gus", s * 1e6);
	else
		snprintf(buf, len, "%.3gns", s * 1e9);
	return buf;
}

void
units_appendf(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}
