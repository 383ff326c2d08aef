// The number of CPUs this process may actually keep busy: the CPUs of its affinity mask
// (taskset, cpusets), further limited by a cgroup CPU quota (containers: cgroup v2 cpu.max,
// cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us). std::thread::hardware_concurrency counts
// every CPU of the machine, which oversubscribes a container limited to a few of them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace poly {

namespace cpus_detail {

// ceil(quota / period) of one quota file pair; 0 when there is no limit or no readable file.
inline int quota_cpus(double quota, double period) {
    if (!(quota > 0) || !(period > 0)) return 0;
    return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

// cgroup v2: "max 100000" (no limit) or "<quota> <period>".
inline int v2_limit(const std::string& file) {
    std::ifstream in(file);
    std::string quota;
    double period = 0;
    if (!(in >> quota >> period) || quota == "max") return 0;
    try {
        return quota_cpus(std::stod(quota), period);
    } catch (...) {
        return 0;
    }
}

// cgroup v1: cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us in `dir`.
inline int v1_limit(const std::string& dir) {
    std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
    double quota = 0, period = 0;
    if (!(q >> quota) || !(p >> period)) return 0;
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
    std::ifstream self("/proc/self/cgroup");
    std::string line;
    while (std::getline(self, line)) {  // "<id>:<controllers>:<path>"
        const auto c1 = line.find(':'), c2 = line.find(':', c1 == std::string::npos ? c1 : c1 + 1);
        if (c1 == std::string::npos || c2 == std::string::npos) continue;
        const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
        if (controllers.empty()) v2_paths = cpus_detail::ancestry(path);
        std::stringstream names(controllers);
        std::string name;
        while (std::getline(names, name, ','))
            if (name == "cpu") v1_paths = cpus_detail::ancestry(path);
    }
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
