// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmicrohttpd through dlopen (see mhd.h): the soname is the one the
 * build found (MHD_SONAME), so the functions match the header compiled
 * against.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mhd.h"

#ifndef MHD_SONAME
#define MHD_SONAME "libmicrohttpd.so.12"
#endif

static struct mhd_api api;
static bool loaded;

#define MHD_SYM(name)                                    \
	{                                                \
		"" #name, offsetof(struct mhd_api, name) \
	}

static const struct {
	const char *name; /* without the MHD_ prefix */
	size_t at;	  /* its pointer's offset in struct mhd_api */
} mhd_syms[] = {
	MHD_SYM(start_daemon),
	MHD_SYM(stop_daemon),
	MHD_SYM(is_feature_supported),
	MHD_SYM(queue_response),
	MHD_SYM(create_response_from_buffer),
	MHD_SYM(create_response_from_buffer_with_free_callback),
	MHD_SYM(destroy_response),
	MHD_SYM(add_response_header),
	MHD_SYM(lookup_connection_value),
	MHD_SYM(get_connection_info),
	MHD_SYM(basic_auth_get_username_password),
	MHD_SYM(free),
	MHD_SYM(suspend_connection),
	MHD_SYM(resume_connection),
};

const struct mhd_api *mhd_load(struct errmsg *msg)
{
	void *lib;

	if (loaded)
		return &api;
	lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		errmsg_set(msg, -ENOENT,
			   "--listen needs libmicrohttpd (%s), which cannot be loaded (%s): install it (Debian: apt-get install libmicrohttpd12)",
			   MHD_SONAME, dlerror());
		return NULL;
	}
	for (size_t i = 0; i < sizeof(mhd_syms) / sizeof(mhd_syms[0]); i++) {
		char name[96] = "MHD_";
		void *f;

		snprintf(name + 4, sizeof(name) - 4, "%s", mhd_syms[i].name);
		f = dlsym(lib, name);
		if (!f) {
			errmsg_set(msg, -ENOENT,
				   "--listen needs %s, which %s lacks: install a newer libmicrohttpd",
				   name, MHD_SONAME);
			dlclose(lib);
			return NULL;
		}
		*(void **)((char *)&api + mhd_syms[i].at) = f;
	}
	loaded = true;
	return &api;
}
