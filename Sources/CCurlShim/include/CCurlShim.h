#ifndef CCURLSHIM_H
#define CCURLSHIM_H

/*
 * Fixed-arity wrappers around libcurl's variadic curl_easy_setopt / curl_easy_getinfo, which Swift
 * cannot import ("Variadic function is unavailable"; notes/http-and-infra.md §4 pitfall 1). One
 * wrapper per argument type that curl.h documents for an option: long, curl_off_t, object pointer,
 * C string, and each callback signature. Every symbol is prefixed `CCurlShim_`.
 *
 * Nothing here owns memory: libcurl copies C strings given to setopt (so a Swift `withCString` is
 * enough), but slists and callback data pointers must outlive the transfer (pitfall 10).
 * Source: curl.h and the curl_easy_setopt(3) / curl_easy_getinfo(3) man pages, libcurl 7.88.1.
 */

#include <curl/curl.h>

/* MARK: curl_easy_setopt */

/** An option whose argument is a `long` (flags, counts, timeouts in ms, HTTP versions). */
CURLcode CCurlShim_easy_setopt_long(CURL *handle, CURLoption option, long value);

/** An option whose argument is a `curl_off_t` (the `_LARGE` sizes, e.g. CURLOPT_INFILESIZE_LARGE). */
CURLcode CCurlShim_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);

/** An option whose argument is an object pointer (CURLOPT_HTTPHEADER slist, *DATA context pointers). */
CURLcode CCurlShim_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);

/** An option whose argument is a C string (CURLOPT_URL, CURLOPT_CUSTOMREQUEST); libcurl copies it. NULL resets. */
CURLcode CCurlShim_easy_setopt_string(CURL *handle, CURLoption option, const char *value);

/** CURLOPT_WRITEFUNCTION or CURLOPT_HEADERFUNCTION (same signature). */
CURLcode CCurlShim_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback);

/** CURLOPT_READFUNCTION. */
CURLcode CCurlShim_easy_setopt_read_function(CURL *handle, curl_read_callback callback);

/** CURLOPT_SEEKFUNCTION (lets libcurl rewind a body, e.g. after a redirect or an auth retry). */
CURLcode CCurlShim_easy_setopt_seek_function(CURL *handle, curl_seek_callback callback);

/** CURLOPT_XFERINFOFUNCTION (progress; also needs CURLOPT_NOPROGRESS = 0). Return non-zero to abort. */
CURLcode CCurlShim_easy_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback callback);

/* MARK: curl_easy_getinfo */

/** A `long` info item (CURLINFO_RESPONSE_CODE, CURLINFO_OS_ERRNO, ...). */
CURLcode CCurlShim_easy_getinfo_long(CURL *handle, CURLINFO info, long *out);

/** A `curl_off_t` info item (CURLINFO_SIZE_UPLOAD_T, CURLINFO_TOTAL_TIME_T in microseconds, ...). */
CURLcode CCurlShim_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out);

/** A `double` info item (deprecated in curl for sizes and times, kept for completeness). */
CURLcode CCurlShim_easy_getinfo_double(CURL *handle, CURLINFO info, double *out);

/** A string info item (CURLINFO_EFFECTIVE_URL, ...); the string belongs to the handle. */
CURLcode CCurlShim_easy_getinfo_string(CURL *handle, CURLINFO info, const char **out);

#endif
