// Strict base64 decoding of the large array payloads of JSON files (CPython's decoder takes one
// byte at a time: 100-250 MB/s on the machines measured).
#pragma once
#include <cstddef>

namespace poly {

// The number of bytes `text` (n characters) decodes to, or -1 unless it is base64 this decoder
// takes: the standard alphabet, a length that is a multiple of 4, padding ('=' once or twice)
// only at the end, and zero bits under the padding. What it refuses, base64.b64decode(validate=
// True) decides (and names the error of).
std::ptrdiff_t base64_decoded_size(const unsigned char* text, std::size_t n);

// Decodes `text` (accepted by base64_decoded_size) into `out`; false (out partly written) when a
// character lies outside the alphabet.
bool base64_decode(const unsigned char* text, std::size_t n, unsigned char* out);

}  // namespace poly
