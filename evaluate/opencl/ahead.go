package opencl

import "sync"

// compiler builds programs ahead of their runs, one at a time, on a
// goroutine of its own: the worker's main goroutine keeps launching and
// timing meanwhile (OpenCL allows building on one thread while another
// launches). Only the main goroutine releases programs, so one it runs is
// never freed under it.
type compiler struct {
	build func(src, opts, name string) (*program, error)

	mu    sync.Mutex
	jobs  map[string]*aheadJob // by build options, until taken
	queue chan *aheadJob
}

type aheadJob struct {
	opts, src, name string
	done            chan struct{}
	p               *program
	err             error
}

// maxAhead bounds the configs waiting to be compiled ahead.
const maxAhead = 16

func newCompiler(build func(src, opts, name string) (*program, error)) *compiler {
	c := &compiler{build: build, jobs: map[string]*aheadJob{}, queue: make(chan *aheadJob, maxAhead)}
	go func() {
		for j := range c.queue {
			j.p, j.err = c.build(j.src, j.opts, j.name)
			close(j.done)
		}
	}()
	return c
}

// add queues opts unless it is queued or the queue is full.
func (c *compiler) add(opts, src, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.jobs[opts]; ok || len(c.jobs) >= maxAhead {
		return // queued, or too many never taken (a cycle cut short)
	}
	j := &aheadJob{opts: opts, src: src, name: name, done: make(chan struct{})}
	select {
	case c.queue <- j:
		c.jobs[opts] = j
	default: // full: it is compiled when it runs
	}
}

// take returns the program of opts compiled ahead, waiting for it while
// it compiles; nil, nil when it was never queued.
func (c *compiler) take(opts string) (*program, error) {
	c.mu.Lock()
	j, ok := c.jobs[opts]
	delete(c.jobs, opts)
	c.mu.Unlock()
	if !ok {
		return nil, nil
	}
	<-j.done
	return j.p, j.err
}

// drop forgets the built jobs whose options are not in keep (built for a
// cycle cut short), returning their programs for the main goroutine to
// release; jobs still building stay until a later drop.
func (c *compiler) drop(keep map[string]bool) []*program {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*program
	for o, j := range c.jobs {
		if keep[o] {
			continue
		}
		select {
		case <-j.done:
			if j.p != nil {
				out = append(out, j.p)
			}
			delete(c.jobs, o)
		default:
		}
	}
	return out
}
