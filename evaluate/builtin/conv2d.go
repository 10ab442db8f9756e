package builtin

import (
	"errors"

	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// conv2dDef is a "valid" 2D convolution (cross-correlation, as in deep
// learning: the filter is not flipped) of an h×w fp32 image with an f×f
// filter: out[y][x] = Σ_{dy,dx} img[y+dy][x+dx]·filt[dy][dx] for the
// (h-f+1)×(w-f+1) output positions where the filter fits entirely.
//
// The output is cut into tile_y×tile_x tiles, dealt round-robin to the
// workers. With local_buffer the tile's input (the tile plus its f-1 halo)
// is first copied into a contiguous per-worker buffer. unroll is the manual
// unroll over adjacent outputs of a row (register blocking): that many
// outputs are computed together, each filter value loaded once for all.
//
// input is a precision parameter (input stage): the image stored in that
// format as reduce stores its vector (a scale per 256 values of the
// row-major image); copying a tile into the local buffer decodes it, so
// only local_buffer configs may store the image reduced.
func conv2dDef() def {
	return def{
		name:     "conv2d",
		dims:     []string{"h", "w", "f"},
		defaults: [][]int{{256, 256, 5}, {512, 512, 7}, {1024, 1024, 3}},
		params: []genome.Param{
			intParam("tile_x", 0, 8, 16, 32, 64, 128, 256),
			intParam("tile_y", 0, 1, 2, 4, 8, 16, 32, 64),
			intParam("workers", 0, 1, 2, 4, 8),
			boolParam("local_buffer"),
			intParam("unroll", 0, 1, 2, 4, 8),
			formatParam("input", precision.FP32, precision.FP16, precision.BF16, precision.INT8, precision.FP8E4M3, precision.INT4),
		},
		precision: map[string]precision.Stage{"input": precision.StageInput},
		cons: []string{
			// A tile never exceeds the output, except that the smallest
			// tile is always allowed so tiny problems keep a space.
			"tile_x <= w - f + 1 or tile_x == 8",
			"tile_y <= h - f + 1",
			// Every worker gets about one tile or more.
			"workers == 1 or tile_x * tile_y * workers <= (w - f + 1) * (h - f + 1)",
			// The unrolled outputs lie in one tile.
			"unroll <= tile_x",
			// An image stored in a reduced format is read only by copying
			// tiles into the local buffer, which decodes them.
			"input == 'fp32' or local_buffer",
		},
		check: func(d []int) error {
			if d[2] > d[0] || d[2] > d[1] {
				return errors.New("filter larger than the image")
			}
			return nil
		},
		sizes: func(d []int) (int, int, int) {
			h, w, f := d[0], d[1], d[2]
			return h * w, f * f, (h - f + 1) * (w - f + 1)
		},
		flops: func(d []int) float64 {
			h, w, f := float64(d[0]), float64(d[1]), float64(d[2])
			return 2 * f * f * (h - f + 1) * (w - f + 1)
		},
		prepare: prepareConv2d,
		ref:     refConv2d,
		verify:  conv2dVerify(),
	}
}

type conv2dConfig struct {
	tx, ty, workers, unroll int
	local                   bool
	in                      precision.Format
}

// convRowFunc computes len(out) consecutive outputs of one row; the input
// window of out[x] starts at src[off+x] with rows ld apart.
type convRowFunc func(out, src []float32, off, ld int, filt []float32, f int)

func prepareConv2d(v map[string]genome.Value, d []int) runner {
	cfg := conv2dConfig{
		tx:      int(v["tile_x"].I),
		ty:      int(v["tile_y"].I),
		workers: int(v["workers"].I),
		unroll:  int(v["unroll"].I),
		local:   v["local_buffer"].Truth(),
	}
	var err error
	if cfg.in, err = precision.ParseFormat(v["input"].S); err != nil {
		panic(err) // the space holds only format names
	}
	h, w, f := d[0], d[1], d[2]
	oh, ow := h-f+1, w-f+1
	ntx, nty := ceilDiv(ow, cfg.tx), ceilDiv(oh, cfg.ty)
	bufs := make([][]float32, cfg.workers)
	if cfg.local {
		for i := range bufs {
			bufs[i] = make([]float32, (min(cfg.ty, oh)+f-1)*(min(cfg.tx, ow)+f-1))
		}
	}
	row := convRowByUnroll(cfg.unroll)

	return func(in Inputs, out []float32) {
		img, filt := in.A, in.B
		var si *stored
		if cfg.in != precision.FP32 && cfg.local {
			var err error
			if si, err = in.storedA(cfg.in); err != nil {
				panic(err) // NaN or Inf in an integer format: Run reports it
			}
		}
		parallel(cfg.workers, func(wk int) {
			buf := bufs[wk]
			for t := wk; t < ntx*nty; t += cfg.workers {
				if in.stopped() {
					return
				}
				y0, x0 := (t/ntx)*cfg.ty, (t%ntx)*cfg.tx
				y1, x1 := min(y0+cfg.ty, oh), min(x0+cfg.tx, ow)
				src, off, ld := img, y0*w+x0, w
				if cfg.local {
					bw, bh := x1-x0+f-1, y1-y0+f-1
					for r := range bh {
						s := (y0+r)*w + x0
						if si != nil {
							si.decodeAt(buf[r*bw:r*bw+bw], s)
						} else {
							copy(buf[r*bw:r*bw+bw], img[s:s+bw])
						}
					}
					src, off, ld = buf, 0, bw
				}
				for y := y0; y < y1; y++ {
					row(out[y*ow+x0:y*ow+x1], src, off+(y-y0)*ld, ld, filt, f)
				}
			}
		})
	}
}

func convRowByUnroll(u int) convRowFunc {
	switch u {
	case 2:
		return convRow2
	case 4:
		return convRow4
	case 8:
		return convRow8
	}
	return convRow1
}

// convRow1 computes one output at a time.
func convRow1(out, src []float32, off, ld int, filt []float32, f int) {
	for x := range out {
		var s float32
		for dy := range f {
			r := src[off+x+dy*ld:][:f]
			fr := filt[dy*f:][:f]
			for dx, v := range fr {
				s += r[dx] * v
			}
		}
		out[x] = s
	}
}

// convRow2 computes 2 adjacent outputs at a time, loading each filter value
// once for all 2.
func convRow2(out, src []float32, off, ld int, filt []float32, f int) {
	x := 0
	for ; x+2 <= len(out); x += 2 {
		var s0, s1 float32
		for dy := range f {
			r := src[off+x+dy*ld:][:f+1]
			fr := filt[dy*f:][:f]
			for dx, v := range fr {
				w := r[dx : dx+2 : dx+2]
				s0 += w[0] * v
				s1 += w[1] * v
			}
		}
		o := out[x : x+2 : x+2]
		o[0] = s0
		o[1] = s1
	}
	convRow1(out[x:], src, off+x, ld, filt, f)
}

// convRow4 computes 4 adjacent outputs at a time, loading each filter value
// once for all 4.
func convRow4(out, src []float32, off, ld int, filt []float32, f int) {
	x := 0
	for ; x+4 <= len(out); x += 4 {
		var s0, s1, s2, s3 float32
		for dy := range f {
			r := src[off+x+dy*ld:][:f+3]
			fr := filt[dy*f:][:f]
			for dx, v := range fr {
				w := r[dx : dx+4 : dx+4]
				s0 += w[0] * v
				s1 += w[1] * v
				s2 += w[2] * v
				s3 += w[3] * v
			}
		}
		o := out[x : x+4 : x+4]
		o[0] = s0
		o[1] = s1
		o[2] = s2
		o[3] = s3
	}
	convRow1(out[x:], src, off+x, ld, filt, f)
}

// convRow8 computes 8 adjacent outputs at a time, loading each filter value
// once for all 8.
func convRow8(out, src []float32, off, ld int, filt []float32, f int) {
	x := 0
	for ; x+8 <= len(out); x += 8 {
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for dy := range f {
			r := src[off+x+dy*ld:][:f+7]
			fr := filt[dy*f:][:f]
			for dx, v := range fr {
				w := r[dx : dx+8 : dx+8]
				s0 += w[0] * v
				s1 += w[1] * v
				s2 += w[2] * v
				s3 += w[3] * v
				s4 += w[4] * v
				s5 += w[5] * v
				s6 += w[6] * v
				s7 += w[7] * v
			}
		}
		o := out[x : x+8 : x+8]
		o[0] = s0
		o[1] = s1
		o[2] = s2
		o[3] = s3
		o[4] = s4
		o[5] = s5
		o[6] = s6
		o[7] = s7
	}
	convRow1(out[x:], src, off+x, ld, filt, f)
}

// refConv2d is the float64 quadruple loop.
func refConv2d(d []int, in Inputs) []float64 {
	h, w, f := d[0], d[1], d[2]
	oh, ow := h-f+1, w-f+1
	out := make([]float64, oh*ow)
	for y := range oh {
		if in.stopped() {
			break
		}
		for x := range ow {
			s := 0.0
			for dy := range f {
				for dx := range f {
					s += float64(in.A[(y+dy)*w+x+dx]) * float64(in.B[dy*f+dx])
				}
			}
			out[y*ow+x] = s
		}
	}
	return out
}
