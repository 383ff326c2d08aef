// Who owns device and pinned memory: one MemoryBlock per allocation, shared (std::shared_ptr)
// by the buffer that allocated it and by every view handed out (NumPy arrays over pinned
// memory, DeviceView objects behind __cuda_array_interface__ consumers). A buffer's free() or
// growth only drops the buffer's own reference; the memory goes back to its allocator when the
// last reference does, so no view ever reads freed memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace poly::cuda {

// Where blocks come from and go back to: the CUDA driver's device or pinned memory, or a
// stand-in given from Python (tests of the ownership rule on machines without a GPU).
class Allocator {
public:
    virtual ~Allocator() = default;
    virtual std::uintptr_t allocate(std::size_t nbytes) = 0;
    // Called exactly once per allocation; must not throw (it runs in destructors).
    virtual void deallocate(std::uintptr_t ptr) noexcept = 0;
};

class MemoryBlock {
public:
    MemoryBlock(std::shared_ptr<Allocator> allocator, std::size_t nbytes)
        : allocator_(std::move(allocator)), nbytes_(nbytes), ptr_(allocator_->allocate(nbytes)) {}
    ~MemoryBlock() {
        if (ptr_ != 0) allocator_->deallocate(ptr_);
    }
    MemoryBlock(const MemoryBlock&) = delete;
    MemoryBlock& operator=(const MemoryBlock&) = delete;

    std::uintptr_t ptr() const { return ptr_; }
    std::size_t nbytes() const { return nbytes_; }

private:
    std::shared_ptr<Allocator> allocator_;
    std::size_t nbytes_;
    std::uintptr_t ptr_;
};

}  // namespace poly::cuda
