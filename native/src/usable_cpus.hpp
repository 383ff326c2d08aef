// The number of CPUs this process may actually keep busy: the CPUs of its affinity mask
// (taskset, cpusets), further limited by a cgroup CPU quota (containers: cgroup v2 cpu.max,
// cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us). std::thread::hardware_concurrency counts
// every CPU of the machine, which oversubscribes a container limited to a few of them.
//
// The files are read with C stdio, not iostreams: a build whose compiler links libstdc++
// statically (some toolchains do by default) has its own copy of the iostream and locale
// machinery beside the process's shared libstdc++, and number extraction through a stream then
// jumps into the other copy's facets and crashes (seen on a GCC 13 toolchain).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace poly {

namespace cpus_detail {

// The next line of `in` (without its newline); false at the end or when `in` is null.
inline bool read_line(std::FILE* in, std::string& line) {
    line.clear();
    if (in == nullptr) return false;
    char buf[512];
    bool any = false;
    while (std::fgets(buf, sizeof(buf), in) != nullptr) {
        any = true;
        line += buf;
        if (!line.empty() && line.back() == '\n') {
            line.pop_back();
            return true;
        }
    }
    return any;
}

// The whitespace-separated words of `text`.
inline std::vector<std::string> words(const std::string& text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
        if (j > i) out.push_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

// `word` as a number; false when it is not one (nothing but a number, no trailing text).
inline bool parse_number(const std::string& word, double& value) {
    if (word.empty()) return false;
    char* end = nullptr;
    value = std::strtod(word.c_str(), &end);
    return end != nullptr && *end == '\0';
}

// The first line of the file at `path` ("" and false when it cannot be opened).
inline bool first_line(const std::string& path, std::string& line) {
    std::FILE* in = std::fopen(path.c_str(), "r");
    const bool ok = read_line(in, line);
    if (in != nullptr) std::fclose(in);
    return ok;
}

// ceil(quota / period) of one quota file pair; 0 when there is no limit or no readable file.
inline int quota_cpus(double quota, double period) {
    if (!(quota > 0) || !(period > 0)) return 0;
    return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

// cgroup v2: "max 100000" (no limit) or "<quota> <period>".
inline int v2_limit(const std::string& file) {
    std::string line;
    if (!first_line(file, line)) return 0;
    const std::vector<std::string> w = words(line);
    double quota = 0, period = 0;
    if (w.size() < 2 || w[0] == "max" || !parse_number(w[0], quota) || !parse_number(w[1], period)) return 0;
    return quota_cpus(quota, period);
}

// cgroup v1: cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us in `dir`.
inline int v1_limit(const std::string& dir) {
    std::string q, p;
    if (!first_line(dir + "/cpu.cfs_quota_us", q) || !first_line(dir + "/cpu.cfs_period_us", p)) return 0;
    const std::vector<std::string> wq = words(q), wp = words(p);
    double quota = 0, period = 0;
    if (wq.empty() || wp.empty() || !parse_number(wq[0], quota) || !parse_number(wp[0], period)) return 0;
    return quota_cpus(quota, period);
}

// The smallest non-zero of `limit`, `x`.
inline int tighter(int limit, int x) { return x > 0 && (limit == 0 || x < limit) ? x : limit; }

// `path` and each of its parents up to "" (the hierarchy's root), as relative directories.
inline std::vector<std::string> ancestry(std::string path) {
    std::vector<std::string> out;
    while (!path.empty() && path.back() == '/') path.pop_back();
    for (;;) {
        out.push_back(path);
        if (path.empty()) break;
        const auto slash = path.rfind('/');
        path = slash == std::string::npos ? std::string() : path.substr(0, slash);
    }
    return out;
}

}  // namespace cpus_detail

// The CPU quota of the cgroups mounted under `root` (0: no quota). The process's own cgroup
// (from /proc/self/cgroup) and its parents are checked, as well as the hierarchy roots, since
// inside a container the process usually sits at the root of its namespace.
inline int cgroup_cpu_limit(const std::string& root) {
    std::vector<std::string> v2_paths{""}, v1_paths{""};
    std::FILE* self = std::fopen("/proc/self/cgroup", "r");
    std::string line;
    while (cpus_detail::read_line(self, line)) {  // "<id>:<controllers>:<path>"
        const auto c1 = line.find(':'), c2 = line.find(':', c1 == std::string::npos ? c1 : c1 + 1);
        if (c1 == std::string::npos || c2 == std::string::npos) continue;
        const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
        if (controllers.empty()) v2_paths = cpus_detail::ancestry(path);
        for (std::size_t start = 0; start <= controllers.size();) {
            std::size_t comma = controllers.find(',', start);
            if (comma == std::string::npos) comma = controllers.size();
            if (controllers.compare(start, comma - start, "cpu") == 0) v1_paths = cpus_detail::ancestry(path);
            start = comma + 1;
        }
    }
    if (self != nullptr) std::fclose(self);
    int limit = 0;
    for (const auto& p : v2_paths) limit = cpus_detail::tighter(limit, cpus_detail::v2_limit(root + p + "/cpu.max"));
    for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"})
        for (const auto& p : v1_paths) limit = cpus_detail::tighter(limit, cpus_detail::v1_limit(root + mount + p));
    return limit;
}

// CPUs of this process's affinity mask (hardware_concurrency where that cannot be read).
inline int affinity_cpus() {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
#endif
    const unsigned hc = std::thread::hardware_concurrency();
    return hc > 0 ? static_cast<int>(hc) : 1;
}

// min(affinity CPUs, cgroup quota under `cgroup_root`), at least 1.
inline int usable_cpus(const std::string& cgroup_root) {
    return std::max(1, cpus_detail::tighter(affinity_cpus(), cgroup_cpu_limit(cgroup_root)));
}

// usable_cpus of the real cgroup mount. The quota is read once per process (it rarely
// changes, and reading files on every call would cost more than small comparisons); the
// affinity mask is asked for on every call (one system call).
inline int usable_cpus() {
    static const int quota = cgroup_cpu_limit("/sys/fs/cgroup");
    return std::max(1, cpus_detail::tighter(affinity_cpus(), quota));
}

}  // namespace poly
