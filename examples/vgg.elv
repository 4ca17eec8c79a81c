// The middle strategy for `shine explore` on vgg.rise: the multiplications fused
// into their reductions (one accumulation loop per output element); the parallel
// mapping and the split sizes are left to the search.
//
//   shine explore examples/vgg.rise --def vggConv --strategy examples/vgg.elv --apply mid \
//     --target cuda --nat h=14 --nat w=14 --nat c=3 --nat o=64 --time-nat h=224,w=224,c=3,o=64 ...
def mid = DFNF ; normalize(fuseReduceMap)
