// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the --web-config parser: any text is either a
 * config (both TLS files or neither, every user with a 60-character
 * bcrypt-shaped hash of a cost crypt takes) or -EINVAL with a line saying why; nothing else.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webconfig w;
	struct errmsg err;
	int rc;

	errmsg_clear(&err);
	rc = webconfig_parse((const char *)data, size, size & 1 ? "/etc" : NULL,
			     &w, &err);
	if (rc) {
		if (rc != -EINVAL || !errmsg_isset(&err))
			abort();
		if (w.cert_file || w.key_file || w.users || w.nusers)
			abort(); /* a refused config leaves nothing */
		return 0;
	}
	if (!w.cert_file != !w.key_file)
		abort();
	for (size_t i = 0; i < w.nusers; i++)
		if (strlen(w.users[i].hash) != WEBCONFIG_HASH_LEN ||
		    !*w.users[i].name || w.cost < WEBCONFIG_COST_MIN ||
		    w.cost > WEBCONFIG_COST_MAX)
			abort();
	webconfig_free(&w);
	return 0;
}
