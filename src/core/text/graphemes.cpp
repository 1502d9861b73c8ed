#include "core/text/graphemes.hpp"

#include "core/text/unicode.hpp"

namespace infer::text {

namespace {

bool is_control(GraphemeBreak b) {
    return b == GraphemeBreak::control || b == GraphemeBreak::cr || b == GraphemeBreak::lf;
}

// Whether the rules join `before` and `after` without looking further back (GB3 to GB9b).
// GB11 and GB12/13 need history and are decided by the caller.
bool joined(GraphemeBreak before, GraphemeBreak after) {
    using B = GraphemeBreak;
    if (before == B::cr && after == B::lf) return true;              // GB3
    if (is_control(before) || is_control(after)) return false;       // GB4, GB5
    if (before == B::hangul_l)                                       // GB6
        return after == B::hangul_l || after == B::hangul_v || after == B::hangul_lv || after == B::hangul_lvt;
    if ((before == B::hangul_lv || before == B::hangul_v) && (after == B::hangul_v || after == B::hangul_t))
        return true;                                                 // GB7
    if ((before == B::hangul_lvt || before == B::hangul_t) && after == B::hangul_t) return true;  // GB8
    if (after == B::extend || after == B::zwj || after == B::spacing_mark) return true;  // GB9, GB9a
    return before == B::prepend;                                     // GB9b
}

}  // namespace

size_t grapheme_end(std::u32string_view text, size_t start) {
    GraphemeBreak before = grapheme_break(text[start]);
    // GB11: Extended_Pictographic Extend* ZWJ × Extended_Pictographic.
    bool pictographic_run = is_extended_pictographic(text[start]);
    bool pictographic_zwj = false;
    // GB12/13: regional indicators pair up; count those in a row.
    size_t regional_run = before == GraphemeBreak::regional_indicator ? 1 : 0;
    size_t end = start + 1;
    for (; end < text.size(); ++end) {
        const char32_t c = text[end];
        const GraphemeBreak after = grapheme_break(c);
        const bool pictographic = is_extended_pictographic(c);
        bool join = joined(before, after);
        if (!join && pictographic_zwj && pictographic) join = true;
        if (!join && before == GraphemeBreak::regional_indicator && after == GraphemeBreak::regional_indicator &&
            regional_run % 2 == 1)
            join = true;
        if (!join) break;
        pictographic_zwj = pictographic_run && after == GraphemeBreak::zwj;
        pictographic_run = pictographic || (pictographic_run && after == GraphemeBreak::extend);
        regional_run = after == GraphemeBreak::regional_indicator ? regional_run + 1 : 0;
        before = after;
    }
    return end;
}

}  // namespace infer::text
