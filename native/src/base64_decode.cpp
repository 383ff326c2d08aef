#include "base64_decode.hpp"

#include <array>
#include <cstdint>

namespace poly {
namespace {

constexpr std::uint8_t kInvalid = 0xFF;

constexpr std::array<std::uint8_t, 256> make_sextets() {
    std::array<std::uint8_t, 256> t{};
    for (auto& v : t) v = kInvalid;
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::uint8_t i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
    return t;
}

constexpr std::array<std::uint8_t, 256> kSextets = make_sextets();

}  // namespace

std::ptrdiff_t base64_decoded_size(const unsigned char* text, std::size_t n) {
    if (n % 4 != 0) return -1;
    if (n == 0) return 0;
    std::size_t pad = text[n - 1] == '=' ? (text[n - 2] == '=' ? 2 : 1) : 0;
    // the last group: its data characters in the alphabet, the bits under the padding zero
    const std::uint8_t c0 = kSextets[text[n - 4]], c1 = kSextets[text[n - 3]];
    const std::uint8_t c2 = pad >= 2 ? 0 : kSextets[text[n - 2]];
    if (c0 == kInvalid || c1 == kInvalid || c2 == kInvalid) return -1;
    if (pad == 2 && (c1 & 0x0F) != 0) return -1;
    if (pad == 1 && (c2 & 0x03) != 0) return -1;
    return static_cast<std::ptrdiff_t>(n / 4 * 3 - pad);
}

bool base64_decode(const unsigned char* text, std::size_t n, unsigned char* out) {
    if (n == 0) return true;
    const std::size_t body = n - 4;  // every group but the last, which may hold padding
    std::uint8_t bad = 0;
    for (std::size_t i = 0; i < body; i += 4, out += 3) {
        const std::uint8_t a = kSextets[text[i]], b = kSextets[text[i + 1]], c = kSextets[text[i + 2]],
                           d = kSextets[text[i + 3]];
        bad |= a | b | c | d;  // (an invalid byte has the top bit set; a sextet never does)
        const std::uint32_t v = (std::uint32_t{a} << 18) | (std::uint32_t{b} << 12) | (std::uint32_t{c} << 6) | d;
        out[0] = static_cast<unsigned char>(v >> 16);
        out[1] = static_cast<unsigned char>(v >> 8);
        out[2] = static_cast<unsigned char>(v);
    }
    if (bad & 0x80) return false;
    const unsigned char* last = text + body;
    const std::uint32_t a = kSextets[last[0]], b = kSextets[last[1]];
    out[0] = static_cast<unsigned char>((a << 2) | (b >> 4));
    if (last[2] == '=') return true;
    const std::uint32_t c = kSextets[last[2]];
    out[1] = static_cast<unsigned char>((b << 4) | (c >> 2));
    if (last[3] == '=') return true;
    const std::uint32_t d = kSextets[last[3]];
    if (d == kInvalid) return false;
    out[2] = static_cast<unsigned char>((c << 6) | d);
    return true;
}

}  // namespace poly
