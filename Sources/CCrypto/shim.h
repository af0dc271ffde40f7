/* SHA256_Init/Update/Final and SHA256_CTX (a resumable digest whose state can be saved) are
 * deprecated in OpenSSL 3 but still exported; keep them without warnings. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
