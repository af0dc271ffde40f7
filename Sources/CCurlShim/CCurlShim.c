#include "CCurlShim.h"

CURLcode CCurlShim_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShim_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShim_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShim_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurlShim_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback) {
    if (option != CURLOPT_WRITEFUNCTION && option != CURLOPT_HEADERFUNCTION) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CCurlShim_easy_setopt_read_function(CURL *handle, curl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

CURLcode CCurlShim_easy_setopt_seek_function(CURL *handle, curl_seek_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}

CURLcode CCurlShim_easy_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode CCurlShim_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLcode CCurlShim_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLcode CCurlShim_easy_getinfo_double(CURL *handle, CURLINFO info, double *out) {
    return curl_easy_getinfo(handle, info, out);
}

CURLcode CCurlShim_easy_getinfo_string(CURL *handle, CURLINFO info, const char **out) {
    return curl_easy_getinfo(handle, info, (char **)out);
}
