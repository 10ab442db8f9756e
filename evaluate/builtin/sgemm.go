package builtin

import (
	"slices"

	"github.com/quasim/quasim/genome"
	"github.com/quasim/quasim/precision"
)

// sgemmDef is C = A·B in fp32: A is m×k, B is k×n, C is m×n, all row-major.
//
// The loop nest is blocked: each worker owns every workers-th block of
// tile_m rows of C and walks the tile_n-wide column blocks, then the
// tile_k-deep k blocks, then its row blocks. With pack_b the tile_k×tile_n
// block of B is first copied into a contiguous per-worker buffer, laid out the
// way the inner loop reads it (row-major for ikj, transposed for ijk and jik).
//
// loop_order is the order of the loops inside a tile. ijk and jik compute
// each C element as a dot product of an A row and a B column (strided in B
// unless packed), with i or j outermost; ikj streams B rows into a C row
// (axpy). unroll is the manual unroll of the k loop: for ijk/jik that many
// independent partial sums, for ikj that many B rows folded into one pass
// over the C row.
func sgemmDef() def {
	return def{
		name:     "sgemm",
		dims:     []string{"m", "n", "k"},
		defaults: [][]int{{128, 128, 128}, {256, 256, 256}, {384, 256, 320}},
		params: []genome.Param{
			intParam("tile_m", 0, 16, 32, 64, 128),
			intParam("tile_n", 0, 16, 32, 64, 128),
			intParam("tile_k", 0, 16, 32, 64, 128),
			intParam("unroll", 0, 1, 2, 4, 8),
			intParam("workers", 0, 1, 2, 4, 8),
			boolParam("pack_b"),
			strParam("loop_order", 0, "ijk", "ikj", "jik"),
			formatParam("b_input", precision.FP32, precision.FP16, precision.BF16, precision.INT8, precision.FP8E4M3, precision.INT4),
		},
		precision: map[string]precision.Stage{"b_input": precision.StageInput},
		cons: []string{
			// A tile never exceeds its dim, except that the smallest tile
			// is always allowed so tiny problems keep a space.
			"tile_m <= m or tile_m == 16",
			"tile_n <= n or tile_n == 16",
			"tile_k <= k or tile_k == 16",
			// Every worker gets at least one block of rows.
			"workers == 1 or tile_m * workers <= m",
			// The A, B and C tiles together fit a 32 KiB L1 data cache.
			"tile_m * tile_k + tile_k * tile_n + tile_m * tile_n <= 8192",
			// B stored in a reduced format is read only by packing its
			// panels, which decodes them.
			"b_input == 'fp32' or pack_b",
		},
		sizes: func(d []int) (int, int, int) {
			m, n, k := d[0], d[1], d[2]
			return m * k, k * n, m * n
		},
		flops:       func(d []int) float64 { return 2 * float64(d[0]) * float64(d[1]) * float64(d[2]) },
		prepare:     prepareSgemm,
		ref:         refSgemm,
		verify:      sgemmVerify(),
		testVariant: sgemmWrongDef,
	}
}

// sgemmWrongDef is sgemm with the deliberately wrong loop order ikj_fast
// appended (Options.TestWrongVariant): the ikj kernel without the last
// partial block of tile_m rows, so fast and wrong unless tile_m divides m.
func sgemmWrongDef() def {
	kd := sgemmDef()
	kd.testVariant = nil
	kd.params = slices.Clone(kd.params)
	for i, p := range kd.params {
		if p.Name == "loop_order" {
			p.Values = append(slices.Clone(p.Values), genome.Str("ikj_fast"))
			kd.params[i] = p
		}
	}
	return kd
}

type sgemmConfig struct {
	tm, tn, tk, unroll, workers int
	pack                        bool
	order                       string
	bIn                         precision.Format
}

func prepareSgemm(v map[string]genome.Value, d []int) runner {
	cfg := sgemmConfig{
		tm:      int(v["tile_m"].I),
		tn:      int(v["tile_n"].I),
		tk:      int(v["tile_k"].I),
		unroll:  int(v["unroll"].I),
		workers: int(v["workers"].I),
		pack:    v["pack_b"].Truth(),
		order:   v["loop_order"].S,
	}
	var err error
	if cfg.bIn, err = precision.ParseFormat(v["b_input"].S); err != nil {
		panic(err) // the space holds only format names
	}
	m, n, k := d[0], d[1], d[2]
	bufs := make([][]float32, cfg.workers)
	if cfg.pack {
		for w := range bufs {
			bufs[w] = make([]float32, min(cfg.tk, k)*min(cfg.tn, n))
		}
	}
	axpy := axpyByUnroll(cfg.unroll)
	dotS := dotStridedByUnroll(cfg.unroll)
	dotC := dotContigByUnroll(cfg.unroll)
	nbm := ceilDiv(m, cfg.tm)
	ikj := cfg.order == "ikj" || cfg.order == "ikj_fast"
	if cfg.order == "ikj_fast" {
		nbm = m / cfg.tm // the deliberate bug: the last partial row block is dropped
	}

	rows := make([][]float32, cfg.workers) // a row segment of a stored B
	if cfg.bIn != precision.FP32 {
		for w := range rows {
			rows[w] = make([]float32, min(cfg.tn, n))
		}
	}
	return func(in Inputs, c []float32) {
		a, b := in.A, in.B
		var sb *stored
		if cfg.bIn != precision.FP32 {
			var err error
			if sb, err = in.storedB(cfg.bIn); err != nil {
				panic(err) // NaN or Inf in an integer format: Run reports it
			}
		}
		clear(c)
		parallel(cfg.workers, func(w int) {
			buf := bufs[w]
			for j0 := 0; j0 < n; j0 += cfg.tn {
				j1 := min(j0+cfg.tn, n)
				for k0 := 0; k0 < k; k0 += cfg.tk {
					k1 := min(k0+cfg.tk, k)
					t := tile{j0: j0, j1: j1, k0: k0, k1: k1, lda: k, ldc: n, b: b, boff: k0*n + j0, ldb: n}
					transposed := !ikj
					switch {
					case cfg.pack && sb != nil && transposed:
						packStoredTransposed(buf, rows[w], sb, n, j0, j1, k0, k1)
						t.b, t.boff, t.ldb = buf, 0, k1-k0
					case cfg.pack && sb != nil:
						packStoredRows(buf, sb, n, j0, j1, k0, k1)
						t.b, t.boff, t.ldb = buf, 0, j1-j0
					case cfg.pack && transposed:
						packTransposed(buf, b, n, j0, j1, k0, k1)
						t.b, t.boff, t.ldb = buf, 0, k1-k0
					case cfg.pack:
						packRows(buf, b, n, j0, j1, k0, k1)
						t.b, t.boff, t.ldb = buf, 0, j1-j0
					}
					for ib := w; ib < nbm; ib += cfg.workers {
						if in.stopped() {
							return
						}
						t.i0 = ib * cfg.tm
						t.i1 = min(t.i0+cfg.tm, m)
						switch {
						case ikj:
							t.ikj(a, c, cfg.unroll, axpy)
						case cfg.pack && cfg.order == "ijk":
							t.ijkPacked(a, c, dotC)
						case cfg.pack:
							t.jikPacked(a, c, dotC)
						case cfg.order == "ijk":
							t.ijk(a, c, dotS)
						default:
							t.jik(a, c, dotS)
						}
					}
				}
			}
		})
	}
}

// tile is one block of the C update C[i0:i1, j0:j1] += A[i0:i1, k0:k1] ·
// B[k0:k1, j0:j1]. Row kk of the B block starts at b[boff+kk*ldb] (ikj);
// for the transposed packing, column jj starts at b[boff+jj*ldb].
type tile struct {
	i0, i1, j0, j1, k0, k1 int
	lda, ldc               int
	b                      []float32
	boff, ldb              int
}

// ikj streams B rows into C rows, u rows of B at a time.
func (t *tile) ikj(a, c []float32, u int, axpy axpyFunc) {
	for i := t.i0; i < t.i1; i++ {
		crow := c[i*t.ldc+t.j0 : i*t.ldc+t.j1]
		arow := a[i*t.lda+t.k0 : i*t.lda+t.k1]
		kk := 0
		for ; kk+u <= len(arow); kk += u {
			axpy(crow, t.b, t.boff+kk*t.ldb, t.ldb, arow[kk:kk+u])
		}
		for ; kk < len(arow); kk++ {
			axpy1(crow, t.b, t.boff+kk*t.ldb, t.ldb, arow[kk:kk+1])
		}
	}
}

// ijk takes dot products of A rows with strided B columns, i outermost.
func (t *tile) ijk(a, c []float32, dot dotFunc) {
	for i := t.i0; i < t.i1; i++ {
		arow := a[i*t.lda+t.k0 : i*t.lda+t.k1]
		crow := c[i*t.ldc : i*t.ldc+t.j1]
		for j := t.j0; j < t.j1; j++ {
			crow[j] += dot(arow, t.b, t.boff+j-t.j0, t.ldb)
		}
	}
}

// jik is ijk with j outermost.
func (t *tile) jik(a, c []float32, dot dotFunc) {
	for j := t.j0; j < t.j1; j++ {
		for i := t.i0; i < t.i1; i++ {
			arow := a[i*t.lda+t.k0 : i*t.lda+t.k1]
			c[i*t.ldc+j] += dot(arow, t.b, t.boff+j-t.j0, t.ldb)
		}
	}
}

// ijkPacked is ijk on a transposed packed B: columns are contiguous.
func (t *tile) ijkPacked(a, c []float32, dot dotFunc) {
	for i := t.i0; i < t.i1; i++ {
		arow := a[i*t.lda+t.k0 : i*t.lda+t.k1]
		crow := c[i*t.ldc : i*t.ldc+t.j1]
		for j := t.j0; j < t.j1; j++ {
			crow[j] += dot(arow, t.b, t.boff+(j-t.j0)*t.ldb, 1)
		}
	}
}

// jikPacked is jik on a transposed packed B.
func (t *tile) jikPacked(a, c []float32, dot dotFunc) {
	for j := t.j0; j < t.j1; j++ {
		off := t.boff + (j-t.j0)*t.ldb
		for i := t.i0; i < t.i1; i++ {
			arow := a[i*t.lda+t.k0 : i*t.lda+t.k1]
			c[i*t.ldc+j] += dot(arow, t.b, off, 1)
		}
	}
}

// packRows copies B[k0:k1, j0:j1] into buf, row-major with stride j1-j0.
func packRows(buf, b []float32, ldb, j0, j1, k0, k1 int) {
	w := j1 - j0
	for kk := range k1 - k0 {
		copy(buf[kk*w:kk*w+w], b[(k0+kk)*ldb+j0:(k0+kk)*ldb+j1])
	}
}

// packTransposed copies B[k0:k1, j0:j1] into buf transposed: column jj of
// the block is buf[jj*h : jj*h+h] with h = k1-k0.
func packTransposed(buf, b []float32, ldb, j0, j1, k0, k1 int) {
	h := k1 - k0
	for kk := range h {
		row := b[(k0+kk)*ldb+j0 : (k0+kk)*ldb+j1]
		for jj, x := range row {
			buf[jj*h+kk] = x
		}
	}
}

// packStoredRows is packRows from B stored in a reduced format: each row
// segment is decoded into the panel.
func packStoredRows(buf []float32, sb *stored, ldb, j0, j1, k0, k1 int) {
	w := j1 - j0
	for kk := range k1 - k0 {
		sb.decodeAt(buf[kk*w:kk*w+w], (k0+kk)*ldb+j0)
	}
}

// packStoredTransposed is packTransposed from B stored in a reduced
// format: each row segment is decoded into row, then scattered.
func packStoredTransposed(buf, row []float32, sb *stored, ldb, j0, j1, k0, k1 int) {
	h := k1 - k0
	row = row[:j1-j0]
	for kk := range h {
		sb.decodeAt(row, (k0+kk)*ldb+j0)
		for jj, x := range row {
			buf[jj*h+kk] = x
		}
	}
}

// refSgemm is the float64 triple loop.
func refSgemm(d []int, in Inputs) []float64 {
	m, n, k := d[0], d[1], d[2]
	c := make([]float64, m*n)
	for i := range m {
		if in.stopped() {
			break
		}
		for p := range k {
			a := float64(in.A[i*k+p])
			for j := range n {
				c[i*n+j] += a * float64(in.B[p*n+j])
			}
		}
	}
	return c
}
