// Element loads, the comparison's arithmetic and the order-preserving keys (per variant: POLY_DTA,
// POLY_DTB, POLY_F32, POLY_XOR, POLY_INT_DIFF and POLY_DEN_WRAP are defined by the host, kernel_source.py).
#ifndef POLY_ELEMENTS_CUH
#define POLY_ELEMENTS_CUH

#include "layouts.cuh"

// -- element loads ---------------------------------------------------------------------------------
__device__ __forceinline__ i64 offset_of(const View& v, u64 i) {
    if (v.ndim == 1) return (i64)i * v.strides[0];
    i64 off = 0;
    u64 rem = i;
    for (int d = v.ndim - 1; d >= 0; --d) {
        const u64 dim = (u64)v.shape[d];
        off += (i64)(rem % dim) * v.strides[d];
        rem /= dim;
    }
    return off;
}

__device__ __forceinline__ float half_to_float(unsigned short h) {
    const u32 sign = ((u32)h & 0x8000u) << 16;
    const u32 exp = ((u32)h >> 10) & 0x1Fu;
    u32 man = (u32)h & 0x3FFu;
    u32 bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            int e = -1;
            do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
            man &= 0x3FFu;
            bits = sign | ((u32)(127 - 15 - e) << 23) | (man << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return __uint_as_float(bits);
}

// codes: 0 bool, 1 i8, 2 i16, 3 i32, 4 i64, 5 u8, 6 u16, 7 u32, 8 u64, 9 f16, 10 bf16, 11 f32, 12 f64
template <int T>
struct Size { static const int value = (T == 0 || T == 1 || T == 5) ? 1 : (T == 2 || T == 6 || T == 9 || T == 10) ? 2
                                      : (T == 3 || T == 7 || T == 11) ? 4 : 8; };

// An element's bytes, zero-extended: loads are issued for several elements before any arithmetic.
template <int T>
__device__ __forceinline__ u64 load_raw(const char* p) {
    if (Size<T>::value == 1) return (u64)*(const unsigned char*)p;
    if (Size<T>::value == 2) return (u64)*(const unsigned short*)p;
    if (Size<T>::value == 4) return (u64)*(const u32*)p;
    return *(const u64*)p;
}

// Element e of a 16-byte chunk of elements of `size` bytes, zero-extended.
template <int SIZE>
__device__ __forceinline__ u64 lane_raw(const uint4& c, int e) {
    const u32 w = (SIZE == 8 ? 2 * e : SIZE == 4 ? e : SIZE == 2 ? e >> 1 : e >> 2);
    const u32 word = w == 0 ? c.x : w == 1 ? c.y : w == 2 ? c.z : c.w;
    if (SIZE == 8) return (u64)word | ((u64)(e == 0 ? c.y : c.w) << 32);
    if (SIZE == 4) return (u64)word;
    if (SIZE == 2) return (u64)((word >> ((e & 1) * 16)) & 0xFFFFu);
    return (u64)((word >> ((e & 3) * 8)) & 0xFFu);
}

template <int T>
__device__ __forceinline__ double value_of(u64 r) {
    if (T == 0) return r != 0 ? 1.0 : 0.0;
    if (T == 1) return (double)(signed char)(unsigned char)r;
    if (T == 2) return (double)(short)(unsigned short)r;
    if (T == 3) return (double)(int)(u32)r;
    if (T == 4) return __ll2double_rn((i64)r);
    if (T == 5) return (double)(unsigned char)r;
    if (T == 6) return (double)(unsigned short)r;
    if (T == 7) return (double)(u32)r;
    if (T == 8) return __ull2double_rn(r);
    if (T == 9) return (double)half_to_float((unsigned short)r);
    if (T == 10) return (double)__uint_as_float(((u32)r) << 16);
    if (T == 11) return (double)__uint_as_float((u32)r);
    return __longlong_as_double((i64)r);
}

template <int T>
__device__ __forceinline__ float fvalue_of(u64 r) {
    if (T == 9) return half_to_float((unsigned short)r);
    if (T == 10) return __uint_as_float(((u32)r) << 16);
    if (T == 11) return __uint_as_float((u32)r);
    return (float)value_of<T>(r);  // bool
}

// An integer (or bool) element as 64-bit two's complement: sign-extended from signed types.
template <int T>
__device__ __forceinline__ u64 bits_of(u64 r) {
    if (T == 0) return r != 0 ? 1ull : 0ull;
    if (T == 1) return (u64)(i64)(signed char)(unsigned char)r;
    if (T == 2) return (u64)(i64)(short)(unsigned short)r;
    if (T == 3) return (u64)(i64)(int)(u32)r;
    return r;
}

// Values of the compute precision: float for float16/bfloat16/float32 (and bool beside them)
// pairs, whose values are all exact in float, double otherwise. Sums are always double.
#if POLY_F32
typedef float VT;
typedef u32 KT;  // order keys
#define POLY_KEY_BITS 32
#else
typedef double VT;
typedef u64 KT;
#define POLY_KEY_BITS 64
#endif
#if POLY_F32
#define POLY_INF __int_as_float(0x7f800000)
#else
#define POLY_INF __longlong_as_double(0x7ff0000000000000ll)
#endif

struct Vals { VT v[4]; };

__device__ __forceinline__ double divisor(const Params& P, double y, u64 ybits) {
#if POLY_DEN_WRAP
    if (ybits == P.den_min_bits) return y;
#endif
    return fabs(y);
}

// a, b, |a - b| and |a - b| / |b'| of one element from its raw bytes, with the CPU engine's rounding.
// INF_EQ false leaves out `infinities_compare_equal` (equal infinities then give NaN, as without
// it): for a path that only takes finite values and sends the others back here.
template <bool INF_EQ = true>
__device__ __forceinline__ void element_raw(const Params& P, u64 ra, u64 rb, Vals& out) {
#if POLY_F32
    const float fx = fvalue_of<POLY_DTA>(ra), fy = fvalue_of<POLY_DTB>(rb);
    float d = fabsf(__fsub_rn(fx, fy));
    if (INF_EQ && P.inf_equal && fx == fy) d = 0.0f;  // equal infinities (equal finite values give 0 anyway)
    // den = b == 0 ? eps : |b|, as one select of |b| and the parameter (the compilers moved eps
    // into a register and overwrote it with |b| under a predicate: a third instruction an element)
    float den;
    asm("{\n\t.reg .pred z;\n\tsetp.eq.f32 z, %1, 0f00000000;\n\tabs.f32 %0, %1;\n\tselp.f32 %0, %2, %0, z;\n\t}"
        : "=f"(den) : "f"(fy), "f"(P.eps32));
    out.v[0] = fx;
    out.v[1] = fy;
    out.v[2] = d;
    // A zero dividend's quotient is +0 (den is |b| or eps then: positive), set without the
    // division: its fast path refuses a zero dividend, and the slow path, taken by the whole warp
    // when one lane needs it, made a pass over equal outputs (or a ReLU's zeros) 40% slower.
    const bool zero_dividend = d == 0.0f;
    float q = __fdiv_rn(zero_dividend ? 1.0f : d, den);
    asm("" : "+f"(q));  // computed once: the compilers would otherwise repeat the division at each use
    out.v[3] = zero_dividend ? 0.0f : q;
#else
    const double x = value_of<POLY_DTA>(ra);
    const double y = value_of<POLY_DTB>(rb);
    out.v[0] = x;
    out.v[1] = y;
#if POLY_INT_DIFF != 0
    const u64 xa = bits_of<POLY_DTA>(ra), xb = bits_of<POLY_DTB>(rb);
    double d;
#if POLY_INT_DIFF == 1
    {
        const u32 w = (u32)xa - (u32)xb;
        const i64 s = (i64)(int)w;
        d = (s == (i64)(-2147483647 - 1)) ? (double)s : (double)(s < 0 ? -s : s);
    }
#elif POLY_INT_DIFF == 2
    {
        const i64 s = (i64)(xa - xb);
        d = (s == (i64)0x8000000000000000ull) ? __ll2double_rn(s) : __ll2double_rn(s < 0 ? -s : s);
    }
#else
    d = __ull2double_rn(xa - xb);
#endif
    const double den = (y == 0.0) ? P.eps : divisor(P, y, xb);
#else
#if POLY_XOR
    double d = ((x != 0.0) != (y != 0.0)) ? 1.0 : 0.0;
#else
    double d = fabs(__dsub_rn(x, y));
#endif
    if (INF_EQ && P.inf_equal && x == y) d = 0.0;  // equal infinities (equal finite values give 0 anyway)
#if POLY_DEN_WRAP
    const double den = (y == 0.0) ? P.eps : divisor(P, y, bits_of<POLY_DTB>(rb));
#else
    const double den = (y == 0.0) ? P.eps : fabs(y);
#endif
#endif
    out.v[2] = d;
    // (a zero dividend as for float32 above; den is then nonzero, and negative where it wraps)
    const bool zero_dividend = d == 0.0;
    const double q = __ddiv_rn(zero_dividend ? 1.0 : d, den);
    out.v[3] = zero_dividend ? copysign(0.0, den) : q;
#endif
}

// Order-preserving key of a value of the compute precision: a negative value's bits inverted, a
// positive value's sign bit set. Written as one mask (the sign spread, or'ed with the top bit)
// xor'ed in: two instructions where the compilers made a test and a select of three.
__device__ __forceinline__ KT order_key(VT v) {
#if POLY_F32
    const u32 u = __float_as_uint(v);
    return u ^ ((u32)((int)u >> 31) | 0x80000000u);
#else
    const u64 u = (u64)__double_as_longlong(v);
    return u ^ ((u64)((i64)u >> 63) | 0x8000000000000000ull);
#endif
}

// A group's keys: those whose top `bits` bits are its prefix (every key where bits is 0).
__device__ __forceinline__ bool in_group(const Group& g, KT key) {
    return g.bits == 0 || (u64)(key >> (POLY_KEY_BITS - g.bits)) == g.prefix;
}

// The `width` key bits that follow its top `bits` (a digit of a plain prefix, no range offset).
__device__ __forceinline__ u32 key_digit(KT key, int bits, int width) {
    return (u32)((key >> (POLY_KEY_BITS - bits - width)) & (KT)((1u << width) - 1u));
}

__device__ __forceinline__ int bit_length(KT x) {
    return x == 0 ? 0 : POLY_KEY_BITS - (POLY_KEY_BITS == 32 ? __clz((u32)x) : __clzll((u64)x));
}

// The top bits that the offsets from lo of every key in [lo, hi] share (at most all but one).
__device__ __forceinline__ int shared_offset_bits(KT lo, KT hi) {
    return min(POLY_KEY_BITS - bit_length((KT)(hi - lo)), POLY_KEY_BITS - 1);
}

// The digit a group's pass counts: the `dbits` key bits after its prefix.
__device__ __forceinline__ u32 digit_of(const Group& g, KT key) {
    return key_digit(key, g.bits, g.dbits);
}

#endif  // POLY_ELEMENTS_CUH
