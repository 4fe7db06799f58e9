/*
 * render/palette.c - torch's memory-timeline categories: names and colours
 * (_CATEGORY_TO_COLORS in torch/profiler/_memory_profiler.py, docs/TORCH.md 4.1).
 */
#include "common/compat.h"
#include "render/render_internal.h"

static const struct {
    const char *name;  /* torch's Category name, None -> "Unknown" */
    const char *color; /* matplotlib / CSS named colour */
    const char *hex;
    unsigned char rgb[3];
} palette[TT_CAT_COUNT] = {
    { "PARAMETER", "darkgreen", "#006400", { 0x00, 0x64, 0x00 } },
    { "OPTIMIZER_STATE", "goldenrod", "#daa520", { 0xda, 0xa5, 0x20 } },
    { "INPUT", "black", "#000000", { 0x00, 0x00, 0x00 } },
    { "TEMPORARY", "mediumpurple", "#9370db", { 0x93, 0x70, 0xdb } },
    { "ACTIVATION", "red", "#ff0000", { 0xff, 0x00, 0x00 } },
    { "GRADIENT", "mediumblue", "#0000cd", { 0x00, 0x00, 0xcd } },
    { "AUTOGRAD_DETAIL", "royalblue", "#4169e1", { 0x41, 0x69, 0xe1 } },
    { "Unknown", "grey", "#808080", { 0x80, 0x80, 0x80 } },
};

static int clamp_cat(int cat)
{
    return cat >= 0 && cat < TT_CAT_COUNT ? cat : TT_CAT_UNKNOWN;
}

const char *tt_category_name(int cat)
{
    return palette[clamp_cat(cat)].name;
}

const char *tt_category_color(int cat)
{
    return palette[clamp_cat(cat)].color;
}

void tt__category_rgb(int cat, unsigned char rgb[3])
{
    memcpy(rgb, palette[clamp_cat(cat)].rgb, 3);
}

const char *tt__category_hex(int cat)
{
    return palette[clamp_cat(cat)].hex;
}
