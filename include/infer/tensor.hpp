#pragma once
// A Tensor is a typed, shaped view of a Buffer that lives on one device. Copies of a Tensor
// share the buffer (like shared_ptr); views (reshape, slice) share it too. Data moves between
// devices only when asked: `to(device)` and `copy_from(src)`; nothing copies silently.
#include <infer/device.hpp>
#include <infer/dtype.hpp>
#include <infer/shape.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace infer {

class Buffer;  // defined in <infer/backend.hpp>; users rarely need it

class Tensor {
public:
    Tensor() = default;  // undefined: no buffer; defined() is false

    // Uninitialized storage for `shape` on `device`.
    static Tensor empty(DType type, const Shape& shape, const Device& device = Device::CPU);
    // Page-locked host memory that `device`'s backend can copy from asynchronously; plain host
    // memory where that backend has no such notion.
    static Tensor empty_pinned(DType type, const Shape& shape, const Device& for_device);
    // Copies `shape.numel()` elements of `type` from host memory at `data` onto `device`.
    static Tensor from_host(const void* data, DType type, const Shape& shape,
                            const Device& device = Device::CPU);
    template <class T>
    static Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
        check_element_count(values.size(), shape);
        return from_host(values.data(), dtype_of<T>(), shape);
    }
    // Wraps a buffer a backend allocated; strides default to the contiguous layout.
    Tensor(std::shared_ptr<Buffer> buffer, DType type, Shape shape, size_t byte_offset = 0,
           std::vector<int64_t> strides = {});

    bool defined() const { return buffer_ != nullptr; }
    DType dtype() const { return dtype_; }
    const Shape& shape() const { return shape_; }
    size_t rank() const { return shape_.rank(); }
    const std::vector<int64_t>& strides() const { return strides_; }  // in elements
    size_t byte_offset() const { return byte_offset_; }
    int64_t numel() const { return shape_.numel(); }
    size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
    Device device() const;
    bool is_contiguous() const;
    bool is_pinned() const;
    const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

    // Address of the first element, on the tensor's device (a device pointer for CUDA).
    void* raw_data();
    const void* raw_data() const;
    // Typed host access. Throws InvalidArgument when T does not match dtype() or when the
    // tensor's memory is not readable by the CPU (call to(Device::CPU) first).
    template <class T>
    T* data() {
        check_host_access(dtype_of<T>());
        return static_cast<T*>(raw_data());
    }
    template <class T>
    const T* data() const {
        check_host_access(dtype_of<T>());
        return static_cast<const T*>(raw_data());
    }
    // The elements as a vector (any device, any layout), converted from dtype() to T's dtype.
    template <class T>
    std::vector<T> to_vector() const {
        std::vector<T> out(static_cast<size_t>(numel()));
        copy_to_host_as(out.data(), dtype_of<T>());
        return out;
    }

    // A view with a new shape (one dimension may be -1); copies first if not contiguous.
    Tensor reshape(const Shape& shape) const;
    // A view of [start, end) with `step` (> 0) along `axis`; negative indices count from the end,
    // out-of-range ones are clamped. (Graphs reverse with the Slice op, which takes negative steps.)
    Tensor slice(int64_t axis, int64_t start, int64_t end, int64_t step = 1) const;
    // This tensor if contiguous, else a dense copy on the same device.
    Tensor contiguous() const;
    // A copy on `device` (this tensor itself when it is already there).
    Tensor to(const Device& device) const;
    // A dense copy on the same device.
    Tensor clone() const;
    // Copies src's elements into this tensor; shapes and dtypes must match; any devices.
    void copy_from(const Tensor& src);

    std::string describe() const;  // "f32[2,3] on cuda:0"

private:
    static void check_element_count(size_t count, const Shape& shape);
    void check_host_access(DType requested) const;
    void copy_to_host_as(void* out, DType out_type) const;

    std::shared_ptr<Buffer> buffer_;
    DType dtype_ = DType::f32;
    Shape shape_;
    std::vector<int64_t> strides_;
    size_t byte_offset_ = 0;
};

}  // namespace infer
