package genome

import "testing"

func BenchmarkExprEval(b *testing.B) {
	for _, c := range exprConditions {
		e, err := Compile(c.src, exprCondResolve)
		if err != nil {
			b.Fatal(err)
		}
		env := exprCondEnv(0) // every condition evaluates in full: use_shmem and use_padding are 1
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkExprCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(exprConditions[0].src, exprCondResolve); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalList(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EvalList("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExprEvalGeneral times the general tree alone, which Eval uses when
// a parameter is not an int.
func BenchmarkExprEvalGeneral(b *testing.B) {
	for _, c := range exprConditions {
		e, err := Compile(c.src, exprCondResolve)
		if err != nil {
			b.Fatal(err)
		}
		env := exprCondEnv(0)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
