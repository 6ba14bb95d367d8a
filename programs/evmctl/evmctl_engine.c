// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: OpenSSL engines (--engine, and the "pkcs11" engine for a
 * pkcs11: key URI when no provider serves it).  OpenSSL 3 deprecates the
 * engine interface; evmctl 1.6 still offers it, so this one file uses it
 * with the deprecation warnings off.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include "evmctl.h"

#ifndef OPENSSL_NO_ENGINE

void *ev_engine_setup(const char *id)
{
	ENGINE *e;

	ERR_clear_error();
	e = ENGINE_by_id(id);
	if (!e) {
		log_err("engine %s isn't available\n", id);
		ev_output_openssl_errors();
		return NULL;
	}
	if (!ENGINE_init(e)) {
		log_err("engine %s init failed\n", id);
		ev_output_openssl_errors();
		ENGINE_free(e);
		return NULL;
	}
	/* As evmctl: the engine's methods become OpenSSL's defaults. */
	ENGINE_set_default(e, ENGINE_METHOD_ALL);
	ERR_clear_error();
	return e;
}

void ev_engine_release(void *engine)
{
	if (!engine)
		return;
	/* Drop the defaults' references too, so that the engine (and its
	 * PKCS#11 module) is finished now rather than in OpenSSL's atexit
	 * cleanup, where SoftHSM's own state is already gone. */
	ENGINE_unregister_RSA(engine);
	ENGINE_unregister_DSA(engine);
	ENGINE_unregister_EC(engine);
	ENGINE_unregister_DH(engine);
	ENGINE_unregister_RAND(engine);
	ENGINE_unregister_ciphers(engine);
	ENGINE_unregister_digests(engine);
	ENGINE_unregister_pkey_meths(engine);
	ENGINE_unregister_pkey_asn1_meths(engine);
	ENGINE_finish(engine);
	ENGINE_free(engine);
}

int ev_engine_load_signer(void *engine, const char *uri, const char *pass,
			  struct uevm_signer **out)
{
	EVP_PKEY *pkey;
	int ret;

	ERR_clear_error();
	if (pass && !ENGINE_ctrl_cmd_string(engine, "PIN", pass, 0)) {
		log_err("Failed to set the PIN for the private key\n");
		ev_output_openssl_errors();
		return -1;
	}
	pkey = ENGINE_load_private_key(engine, uri, NULL, NULL);
	if (!pkey) {
		log_err("Failed to load private key %s\n", uri);
		ev_output_openssl_errors();
		return -1;
	}
	ret = uevm_signer_from_pkey(pkey, out);
	EVP_PKEY_free(pkey);
	if (ret) {
		log_err("Failed to load private key %s\n", uri);
		log_err("openssl: %s\n", uevm_last_error());
		return -1;
	}
	return 0;
}

#else

void *ev_engine_setup(const char *id)
{
	(void)id;
	log_err("OpenSSL \"engine\" support is disabled\n");
	return NULL;
}

void ev_engine_release(void *engine)
{
	(void)engine;
}

int ev_engine_load_signer(void *engine, const char *uri, const char *pass,
			  struct uevm_signer **out)
{
	(void)engine;
	(void)uri;
	(void)pass;
	(void)out;
	log_err("OpenSSL \"engine\" support is disabled\n");
	return -1;
}

#endif
