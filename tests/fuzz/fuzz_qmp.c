// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the QMP client's message handling: the input is
 * what a monitor sends (written into one end of a socket pair, which is
 * then closed), read by the client waiting for the reply to command 1 and
 * then to command 2. Every outcome must be a reply or one of the errors
 * the header lists, with a line in q.err; never a crash, a hang or a read
 * past the data.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errmsg.h"
#include "qmp_client.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool fuzz_known(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -EPROTO ||
	       rc == -EMSGSIZE || rc == -ENOBUFS || rc == -EREMOTEIO ||
	       rc == -EINTR;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qmp q;
	int sv[2];

	if (size > 65536)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	{
		int big = 1 << 20;

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	}
	for (size_t off = 0; off < size;) {
		ssize_t n = write(sv[0], data + off, size - off);

		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	close(sv[0]);
	qmp_init(&q, 10);
	q.fd = sv[1];
	qmp_budget(&q, size & 1 ? 4096 : QMP_BUDGET_DEFAULT);
	for (uint64_t id = 1; id <= 2; id++) {
		json_t *ret = NULL;
		int rc;

		errmsg_clear(&q.err);
		rc = qmp_recv(&q, id, util_now_ns() + 10000000ull, &ret);
		if (!rc) {
			if (!ret)
				abort();
			json_decref(ret);
			continue;
		}
		if (!fuzz_known(rc) || !errmsg_isset(&q.err))
			abort();
		if (rc != -EREMOTEIO)
			break;
	}
	qmp_close(&q);
	return 0;
}
