// Tensor: allocation, views, and explicit copies between devices.
#include "core/element_convert.hpp"

#include <infer/backend.hpp>
#include <infer/error.hpp>
#include <infer/tensor.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace infer {

namespace {
// Copies a dense byte range between any two devices, staging through the host when neither
// side is the host.
void copy_dense_bytes(void* dst, const Device& dst_device, bool dst_host,
                      const void* src, const Device& src_device, bool src_host, size_t bytes) {
    if (bytes == 0) return;
    if (dst_host && src_host) {
        std::memcpy(dst, src, bytes);
    } else if (src_host) {
        backend_for(dst_device)->copy_from_host(dst, src, bytes, dst_device.index, nullptr);
    } else if (dst_host) {
        backend_for(src_device)->copy_to_host(dst, src, bytes, src_device.index, nullptr);
    } else if (dst_device == src_device) {
        backend_for(dst_device)->copy_on_device(dst, src, bytes, dst_device.index, nullptr);
    } else {
        std::vector<unsigned char> staging(bytes);
        backend_for(src_device)->copy_to_host(staging.data(), src, bytes, src_device.index, nullptr);
        backend_for(dst_device)->copy_from_host(dst, staging.data(), bytes, dst_device.index, nullptr);
    }
}

// Gathers a strided host view into dense memory.
void gather_strided(unsigned char* dst, const unsigned char* src, const Shape& shape,
                    const std::vector<int64_t>& strides, size_t element_size) {
    const size_t rank = shape.rank();
    const int64_t count = shape.numel();
    std::vector<int64_t> index(rank, 0);
    for (int64_t n = 0; n < count; ++n) {
        int64_t offset = 0;
        for (size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
        std::memcpy(dst + n * element_size, src + offset * static_cast<int64_t>(element_size),
                    element_size);
        for (size_t d = rank; d-- > 0;) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
}
}  // namespace

Tensor::Tensor(std::shared_ptr<Buffer> buffer, DType type, Shape shape, size_t byte_offset,
               std::vector<int64_t> strides)
    : buffer_(std::move(buffer)), dtype_(type), shape_(std::move(shape)),
      strides_(strides.empty() ? shape_.contiguous_strides() : std::move(strides)),
      byte_offset_(byte_offset) {
    if (!shape_.is_static()) throw InvalidArgument("tensor shape " + shape_.to_string() + " is not static");
    if (strides_.size() != shape_.rank())
        throw InvalidArgument("tensor strides do not match shape " + shape_.to_string());
}

Tensor Tensor::empty(DType type, const Shape& shape, const Device& device) {
    const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(type);
    return Tensor(backend_for(device)->allocate(bytes, device.index), type, shape);
}

Tensor Tensor::empty_pinned(DType type, const Shape& shape, const Device& for_device) {
    const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(type);
    return Tensor(backend_for(for_device)->allocate_pinned_host(bytes, for_device.index), type, shape);
}

Tensor Tensor::from_host(const void* data, DType type, const Shape& shape, const Device& device) {
    Tensor t = empty(type, shape, device);
    if (t.nbytes() && data == nullptr) throw InvalidArgument("from_host: data is null");
    copy_dense_bytes(t.raw_data(), device, t.buffer_->host_accessible(), data, Device::CPU, true,
                     t.nbytes());
    return t;
}

void Tensor::check_element_count(size_t count, const Shape& shape) {
    if (static_cast<int64_t>(count) != shape.numel())
        throw InvalidArgument("from_vector: " + std::to_string(count) + " values for shape " +
                              shape.to_string() + " (" + std::to_string(shape.numel()) + " elements)");
}

Device Tensor::device() const { return buffer_ ? buffer_->device() : Device::CPU; }

bool Tensor::is_contiguous() const {
    const std::vector<int64_t> dense = shape_.contiguous_strides();
    for (size_t i = 0; i < shape_.rank(); ++i)
        if (shape_[i] != 1 && strides_[i] != dense[i]) return false;
    return true;
}

bool Tensor::is_pinned() const { return buffer_ && buffer_->pinned(); }

void* Tensor::raw_data() {
    return buffer_ ? static_cast<unsigned char*>(buffer_->data()) + byte_offset_ : nullptr;
}
const void* Tensor::raw_data() const {
    return buffer_ ? static_cast<const unsigned char*>(buffer_->data()) + byte_offset_ : nullptr;
}

void Tensor::check_host_access(DType requested) const {
    if (!defined()) throw InvalidArgument("data(): the tensor is undefined");
    if (requested != dtype_)
        throw InvalidArgument("data<" + std::string(dtype_name(requested)) + ">() on a " +
                              std::string(dtype_name(dtype_)) + " tensor");
    if (!buffer_->host_accessible())
        throw InvalidArgument("data(): tensor " + describe() +
                              " is not in host memory; call to(Device::CPU) first");
}

void Tensor::copy_to_host_as(void* out, DType out_type) const {
    if (!defined()) throw InvalidArgument("to_vector(): the tensor is undefined");
    const Tensor host = to(Device::CPU).contiguous();
    detail::convert_elements(host.raw_data(), dtype_, out, out_type, static_cast<size_t>(numel()));
}

Tensor Tensor::reshape(const Shape& shape) const {
    if (!defined()) throw InvalidArgument("reshape: the tensor is undefined");
    std::vector<int64_t> dims = shape.dims();
    int64_t known = 1;
    int inferred = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == -1) {
            if (inferred >= 0) throw InvalidArgument("reshape: more than one -1 in " + shape.to_string());
            inferred = static_cast<int>(i);
        } else if (dims[i] < 0) {
            throw InvalidArgument("reshape: negative dimension in " + shape.to_string());
        } else {
            known *= dims[i];
        }
    }
    if (inferred >= 0 && known != 0 && numel() % known == 0) dims[inferred] = numel() / known;
    const Shape target(dims);
    if ((inferred >= 0 && dims[inferred] == -1) || target.numel() != numel())
        throw InvalidArgument("reshape: cannot view " + describe() + " as " + shape.to_string());
    if (!is_contiguous()) return contiguous().reshape(target);
    return Tensor(buffer_, dtype_, target, byte_offset_);
}

Tensor Tensor::slice(int64_t axis, int64_t start, int64_t end, int64_t step) const {
    if (!defined()) throw InvalidArgument("slice: the tensor is undefined");
    const size_t a = shape_.normalize_axis(axis, "slice axis");
    if (step <= 0) throw InvalidArgument("slice: step must be positive, got " + std::to_string(step));
    const int64_t dim = shape_[a];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, start, dim);
    Shape shape = shape_;
    shape[a] = (end - start + step - 1) / step;
    std::vector<int64_t> strides = strides_;
    const size_t offset = byte_offset_ + static_cast<size_t>(start * strides_[a]) * dtype_size(dtype_);
    strides[a] *= step;
    return Tensor(buffer_, dtype_, shape, offset, strides);
}

Tensor Tensor::contiguous() const {
    if (!defined() || is_contiguous()) return *this;
    if (buffer_->host_accessible()) {
        Tensor out = empty(dtype_, shape_, device());
        gather_strided(static_cast<unsigned char*>(out.raw_data()),
                       static_cast<const unsigned char*>(raw_data()), shape_, strides_,
                       dtype_size(dtype_));
        return out;
    }
    // Off the host: bring the whole buffer over, gather there, send the dense result back.
    auto staging = std::make_shared<Buffer>(std::malloc(buffer_->bytes() + 1), buffer_->bytes(),
                                            Device::CPU, [](void* p) { std::free(p); },
                                            Buffer::Flags{true, false});
    copy_dense_bytes(staging->data(), Device::CPU, true, buffer_->data(), device(), false,
                     buffer_->bytes());
    return Tensor(staging, dtype_, shape_, byte_offset_, strides_).contiguous().to(device());
}

Tensor Tensor::to(const Device& target) const {
    if (!defined()) throw InvalidArgument("to(" + target.to_string() + "): the tensor is undefined");
    if (target == device()) return *this;
    Tensor out = empty(dtype_, shape_, target);
    out.copy_from(*this);
    return out;
}

Tensor Tensor::clone() const {
    if (!defined()) return *this;
    Tensor out = empty(dtype_, shape_, device());
    out.copy_from(*this);
    return out;
}

void Tensor::copy_from(const Tensor& src) {
    if (!defined() || !src.defined()) throw InvalidArgument("copy_from: a tensor is undefined");
    if (src.dtype_ != dtype_ || src.shape_ != shape_)
        throw InvalidArgument("copy_from: source " + src.describe() + " does not match " + describe());
    if (!is_contiguous()) throw InvalidArgument("copy_from: destination " + describe() + " is a strided view");
    const Tensor dense = src.contiguous();
    copy_dense_bytes(raw_data(), device(), buffer_->host_accessible(), dense.raw_data(),
                     dense.device(), dense.buffer_->host_accessible(), nbytes());
}

std::string Tensor::describe() const {
    if (!defined()) return "undefined tensor";
    return std::string(dtype_name(dtype_)) + shape_.to_string() + " on " + device().to_string();
}

}  // namespace infer
