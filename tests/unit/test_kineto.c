/*
 * tests/unit/test_kineto.c - the meaning of Kineto values (formats/kineto.c):
 * c10 device names.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "tracetool/formats.h"

static void parses(const char *s, int type, int64_t index)
{
    int t = -99;
    int64_t i = -99;
    cr_assert_eq(tt_device_parse(s, &t, &i), 0, "%s", s);
    cr_assert_eq(t, type, "%s: type %d", s, t);
    cr_assert_eq(i, index, "%s: index %lld", s, (long long)i);
}

Test(device, every_c10_type_by_name)
{
    /* c10/core/DeviceType.h values */
    parses("cpu", 0, -1);
    parses("cpu:0", 0, -1);
    parses("cuda", 1, 0);
    parses("cuda:3", 1, 3);
    parses("hip:0", 6, 0);
    parses("xpu:1", 12, 1);
    parses("mps:0", 13, 0);
    parses("meta", 14, 0);
    parses("hpu:2", 15, 2);
    parses("mtia:0", 19, 0);
    parses("privateuseone:1", 20, 1);
    parses("6:0", 6, 0);
}

Test(device, bad_ones_are_refused)
{
    static const char *bad[] = { "cuda:abc", "cuda:", "cuda:-1", "cuda:1x", "gpu:0", "",
                                 ":0", "CUDA:0", "cuda:99999999999" };
    size_t k;
    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        int t;
        int64_t i;
        cr_assert_eq(tt_device_parse(bad[k], &t, &i), TT_EINVALID, "'%s' accepted", bad[k]);
    }
}

Test(device, names_round_trip)
{
    char buf[32];
    int t;
    for (t = 0; t <= 20; t++) {
        int t2;
        int64_t i2;
        cr_assert_not_null(tt_device_type_name(t));
        tt_device_format(t, t == 0 ? -1 : 2, buf, sizeof(buf));
        cr_assert_eq(tt_device_parse(buf, &t2, &i2), 0, "%s", buf);
        cr_assert_eq(t2, t);
        cr_assert_eq(i2, t == 0 ? -1 : 2);
    }
    cr_assert_null(tt_device_type_name(21));
    tt_device_format(42, 3, buf, sizeof(buf));
    cr_assert_str_eq(buf, "type42:3");
}
