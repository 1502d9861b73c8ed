#include "backends/cpu/kernels/winograd_conv.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <vector>

namespace infer::cpu {

namespace {

constexpr int64_t kMatrices = 16;  // the 4x4 transformed values of a tile
// Transformed inputs and sums of one chunk of tiles: about this much (in L2 and L3 between the
// transforms and the products), at least one tile.
constexpr int64_t kChunkBytes = 2 * 1024 * 1024;

constexpr int64_t kFewestTiles = 48;

int64_t tiles_along(const SpatialAxis& a) { return (a.out + 1) / 2; }

// Tiles per chunk: within kChunkBytes, the chunks a multiple of the pool's threads in number
// and as equal as can be, so that each thread takes the same share (784 tiles in chunks of 256
// had given one of two threads 512).
int64_t chunk_tiles(const ChannelGeometry& g, int64_t threads) {
    const int64_t tiles = std::max<int64_t>(1, g.images * tiles_along(g.rows) * tiles_along(g.columns));
    const int64_t per_tile = kMatrices * (g.channels + g.out_channels) * static_cast<int64_t>(sizeof(float));
    const int64_t most = std::max<int64_t>(1, kChunkBytes / per_tile);
    const int64_t chunks = ((tiles + most - 1) / most + threads - 1) / threads * threads;
    return std::clamp<int64_t>((tiles + chunks - 1) / chunks, 1, tiles);
}

int64_t chunk_floats(const ChannelGeometry& g, int64_t threads) {
    return kMatrices * chunk_tiles(g, threads) * (g.channels + g.out_channels);
}

// Where a tile starts: its image and its first output row and column.
struct TileAt {
    int64_t image, row, column;
};
TileAt tile_at(const ChannelGeometry& g, int64_t tile) {
    const int64_t across = tiles_along(g.columns), per_image = tiles_along(g.rows) * across;
    return {tile / per_image, tile % per_image / across * 2, tile % across * 2};
}

// V = Bᵀ d B for channels [c, c + lanes of V) of one tile: d its 4x4 input pixels (rows `row`
// floats apart, pixels `channels` apart from `origin`), V's 16 values into the 16 matrices
// (`plane` floats apart). Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
template <class V>
__attribute__((always_inline)) inline void transform_input(const float* origin, int64_t row, int64_t channels, float* v,
                                                           int64_t plane, int64_t c) {
    V d[4][4], t[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) d[i][j] = load<V>(origin + i * row + j * channels + c);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        t[0][j] = d[0][j] - d[2][j];
        t[1][j] = d[1][j] + d[2][j];
        t[2][j] = d[2][j] - d[1][j];
        t[3][j] = d[1][j] - d[3][j];
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        store(v + (i * 4 + 0) * plane + c, t[i][0] - t[i][2]);
        store(v + (i * 4 + 1) * plane + c, t[i][1] + t[i][2]);
        store(v + (i * 4 + 2) * plane + c, t[i][2] - t[i][1]);
        store(v + (i * 4 + 3) * plane + c, t[i][1] - t[i][3]);
    }
}

// The tile's 2x2 outputs for output channels [c, c + lanes of V) from its 16 sums (`plane`
// floats apart from `m`): Aᵀ s A, Aᵀ = [1 1 1 0; 0 1 -1 -1]; then bias, residual, activation,
// stored where they lie inside Y.
template <class V>
__attribute__((always_inline)) inline void transform_output(const float* m, int64_t plane, const ChannelGeometry& g,
                                                            TileAt at, const float* bias, const float* z,
                                                            const ConvActivation& a, float* y, int64_t c) {
    V s[4][4], r[2][4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) s[i][j] = load<V>(m + (i * 4 + j) * plane + c);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        r[0][j] = s[0][j] + s[1][j] + s[2][j];
        r[1][j] = s[1][j] - s[2][j] - s[3][j];
    }
    const V b = bias ? load<V>(bias + c) : V{};
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) {
        const V out[2] = {r[i][0] + r[i][1] + r[i][2], r[i][1] - r[i][2] - r[i][3]};
        if (at.row + i >= g.rows.out) break;
#pragma GCC unroll 2
        for (int j = 0; j < 2; ++j) {
            if (at.column + j >= g.columns.out) break;
            const int64_t to = ((at.image * g.rows.out + at.row + i) * g.columns.out + at.column + j) * g.out_channels + c;
            V v = out[j] + b;
            if (z) v += load<V>(z + to);
            store(y + to, activate(v, a));
        }
    }
}

// Tiles [begin, end) of the chunk from `first`: every channel vector, then the tail a channel
// at a time.
template <class V>
__attribute__((always_inline)) inline void input_tiles(const float* image, const ChannelGeometry& g, int64_t first,
                                                       int64_t chunk, float* v, int64_t begin, int64_t end) {
    const int64_t channels = g.channels, row = g.padded_w * channels, plane = chunk * channels;
    const int64_t vectors = channels / kLanes<V> * kLanes<V>;
    for (int64_t t = begin; t < end; ++t) {
        const TileAt at = tile_at(g, first + t);
        const float* origin = image + ((at.image * g.padded_h + at.row) * g.padded_w + at.column) * channels;
        float* to = v + t * channels;
        for (int64_t c = 0; c < vectors; c += kLanes<V>) transform_input<V>(origin, row, channels, to, plane, c);
        for (int64_t c = vectors; c < channels; ++c) transform_input<float>(origin, row, channels, to, plane, c);
    }
}

template <class V>
__attribute__((always_inline)) inline void output_tiles(const float* m, const ChannelGeometry& g, int64_t first, int64_t chunk,
                                                        const float* bias, const float* z, const ConvActivation& a,
                                                        float* y, int64_t begin, int64_t end) {
    const int64_t out = g.out_channels, plane = chunk * out, vectors = out / kLanes<V> * kLanes<V>;
    for (int64_t t = begin; t < end; ++t) {
        const TileAt at = tile_at(g, first + t);
        const float* from = m + t * out;
        for (int64_t c = 0; c < vectors; c += kLanes<V>) transform_output<V>(from, plane, g, at, bias, z, a, y, c);
        for (int64_t c = vectors; c < out; ++c) transform_output<float>(from, plane, g, at, bias, z, a, y, c);
    }
}

__attribute__((target("avx512f"))) void input_tiles_avx512(const float* image, const ChannelGeometry& g, int64_t first,
                                                           int64_t chunk, float* v, int64_t begin, int64_t end) {
    input_tiles<Float16>(image, g, first, chunk, v, begin, end);
}
__attribute__((target("avx2,fma"))) void input_tiles_avx2(const float* image, const ChannelGeometry& g, int64_t first,
                                                          int64_t chunk, float* v, int64_t begin, int64_t end) {
    input_tiles<Float8>(image, g, first, chunk, v, begin, end);
}
__attribute__((target("avx512f"))) void output_tiles_avx512(const float* m, const ChannelGeometry& g, int64_t first,
                                                            int64_t chunk, const float* bias, const float* z,
                                                            const ConvActivation& a, float* y, int64_t begin, int64_t end) {
    output_tiles<Float16>(m, g, first, chunk, bias, z, a, y, begin, end);
}
__attribute__((target("avx2,fma"))) void output_tiles_avx2(const float* m, const ChannelGeometry& g, int64_t first,
                                                           int64_t chunk, const float* bias, const float* z,
                                                           const ConvActivation& a, float* y, int64_t begin, int64_t end) {
    output_tiles<Float8>(m, g, first, chunk, bias, z, a, y, begin, end);
}

}  // namespace

bool winograd_takes(const Attributes& attributes, const Shape& x, const Shape& w, FloatGemmKernel kernel) {
    const auto ones = [&](const char* name) {
        const std::vector<int64_t> v = attributes.get_ints(name, {1, 1});
        return std::all_of(v.begin(), v.end(), [](int64_t d) { return d == 1; });
    };
    if (x.rank() != 4 || w.rank() != 4) return false;
    const int64_t tiles = x[0] * ((x[1] + 1) / 2) * ((x[2] + 1) / 2);  // about: the output is X's size with pads 1
    return (kernel == FloatGemmKernel::avx512 || kernel == FloatGemmKernel::avx2) && w[2] == 3 && w[3] == 3 &&
           attributes.get_int("group", 1) == 1 && w[1] >= 16 && w[0] >= 16 && tiles >= kFewestTiles && ones("strides") &&
           ones("dilations");
}

int64_t winograd_image_extent(const SpatialAxis& axis) { return 2 * tiles_along(axis) + 2; }

WinogradWeights::WinogradWeights(FloatGemmKernel kernel, int64_t channels, int64_t out_channels)
    : layout_(packed_f32_layout(kernel, channels, out_channels)),
      channels_(channels),
      out_channels_(out_channels),
      matrix_elements_(packed_elements(layout_)) {}

// U = G g Gᵀ per output channel o and channel c, G = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1].
void WinogradWeights::pack(const float* w, float* out) const {
    std::fill_n(out, elements(), 0.0f);
    for (int64_t o = 0; o < out_channels_; ++o)
        for (int64_t c = 0; c < channels_; ++c) {
            const float* g = w + (o * channels_ + c) * 9;
            float t[4][3];  // G g
            for (int j = 0; j < 3; ++j) {
                t[0][j] = g[j];
                t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
                t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
                t[3][j] = g[6 + j];
            }
            for (int i = 0; i < 4; ++i) {
                const float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]), 0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
                for (int j = 0; j < 4; ++j) *f32_panel_element(layout_, out + (i * 4 + j) * matrix_elements_, c, o) = u[j];
            }
        }
}

size_t winograd_workspace_bytes(const ChannelGeometry& g) {
    const int64_t threads = pool_thread_count();
    return sizeof(float) * static_cast<size_t>(threads * chunk_floats(g, threads));
}

// Each of the pool's threads takes an equal run of chunks of tiles through all three steps in its
// own part of the workspace: its chunk's transforms and 16 products stay in its core's caches,
// and the layer is one parallel region. The runs are contiguous, so a thread writes a band of
// the image's rows, as the next layer's product (its rows split in bands too) reads them; every
// threads-th chunk instead left half of each band in the other core's cache (ResNet-50's next
// 1x1 layers took 0.80 ms on two threads against 0.53 alone). Splitting each step between the threads
// instead (18 regions per chunk, the products of a few hundred rows halved) made two threads
// slower than one on ResNet-50's 56x56 layers (1.58 against 1.3 ms).
void winograd_conv(const float* image, const float* u, const WinogradWeights& weights, const ChannelGeometry& g,
                   FloatGemmKernel kernel, const float* bias, const float* z, const ConvActivation& activation, float* y,
                   float* workspace) {
    const int64_t threads = pool_thread_count(), chunk = chunk_tiles(g, threads);
    const int64_t tiles = g.images * tiles_along(g.rows) * tiles_along(g.columns), chunks = (tiles + chunk - 1) / chunk;
    const bool avx512 = kernel == FloatGemmKernel::avx512;
    const int64_t slots = std::min(threads, chunks), share = (chunks + slots - 1) / slots;
    parallel_for(slots, 1, [&](int64_t begin, int64_t end) {
        for (int64_t slot = begin; slot < end; ++slot) {
            float* v = workspace + slot * chunk_floats(g, threads);
            float* m = v + kMatrices * chunk * g.channels;
            for (int64_t c = slot * share; c < std::min(chunks, (slot + 1) * share); ++c) {
                const int64_t first = c * chunk, count = std::min(chunk, tiles - first);
                (avx512 ? input_tiles_avx512 : input_tiles_avx2)(image, g, first, chunk, v, 0, count);
                for (int64_t i = 0; i < kMatrices; ++i) {  // inside a pool task: each product on this thread
                    TileWriter writer{m + i * chunk * g.out_channels, false, g.out_channels};
                    gemm_packed_float(weights.layout(), u + i * weights.matrix_elements(), v + i * chunk * g.channels,
                                      g.channels, count, &TileWriter::tile, &writer);
                }
                (avx512 ? output_tiles_avx512 : output_tiles_avx2)(m, g, first, chunk, bias, z, activation, y, 0, count);
            }
        }
    });
}

}  // namespace infer::cpu
