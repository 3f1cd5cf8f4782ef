/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libmicrohttpd, loaded when the exporter starts (--listen), not when the
 * program does: with the TLS stack it pulls in, it is ten shared objects
 * whose loading cost every other run (the monitor, -1, -l) about 1.2 ms
 * of CPU at startup, and a host without it can still run everything but
 * the exporter.
 */
#ifndef KVMSTAT_MHD_H
#define KVMSTAT_MHD_H

#include <microhttpd.h>

#include "errmsg.h"

/* The functions the exporter calls, named as in libmicrohttpd without
 * its MHD_ prefix. */
struct mhd_api {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_is_feature_supported) *is_feature_supported;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback)
		*create_response_from_buffer_with_free_callback;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_basic_auth_get_username_password)
		*basic_auth_get_username_password;
	__typeof__(MHD_free) *free;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
};

/* The library's functions, loaded on the first call (from the main
 * thread); NULL, with one line in msg naming the package to install, when
 * the library or one of them is missing. */
const struct mhd_api *mhd_load(struct errmsg *msg);

#endif
