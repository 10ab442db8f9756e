package cl

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Handles of OpenCL objects, as the ICD loader gives them.
type (
	PlatformID uintptr
	DeviceID   uintptr
)

// DefaultLibs are the names Load tries, in order: the ICD loader of
// Debian's ocl-icd-libopencl1 and most distributions.
var DefaultLibs = []string{"libOpenCL.so.1", "libOpenCL.so"}

// Lib is a loaded ICD loader. Its methods are safe for concurrent use as
// far as the OpenCL implementation's are.
type Lib struct {
	path string

	getPlatformIDs          func(n uint32, ids unsafe.Pointer, num unsafe.Pointer) int32
	getPlatformInfo         func(p uintptr, param uint32, size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32
	getDeviceIDs            func(p uintptr, typ uint64, n uint32, ids unsafe.Pointer, num unsafe.Pointer) int32
	getDeviceInfo           func(d uintptr, param uint32, size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32
	createContext           func(props unsafe.Pointer, n uint32, devs unsafe.Pointer, notify uintptr, user uintptr, errc unsafe.Pointer) uintptr
	releaseContext          func(c uintptr) int32
	createCommandQueue      func(c uintptr, d uintptr, props uint64, errc unsafe.Pointer) uintptr
	releaseCommandQueue     func(q uintptr) int32
	createProgramWithSource func(c uintptr, n uint32, strs unsafe.Pointer, lens unsafe.Pointer, errc unsafe.Pointer) uintptr
	createProgramWithBinary func(c uintptr, n uint32, devs unsafe.Pointer, lens unsafe.Pointer, bins unsafe.Pointer, status unsafe.Pointer, errc unsafe.Pointer) uintptr
	buildProgram            func(p uintptr, n uint32, devs unsafe.Pointer, opts unsafe.Pointer, notify uintptr, user uintptr) int32
	getProgramBuildInfo     func(p uintptr, d uintptr, param uint32, size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32
	getProgramInfo          func(p uintptr, param uint32, size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32
	releaseProgram          func(p uintptr) int32
	createKernel            func(p uintptr, name unsafe.Pointer, errc unsafe.Pointer) uintptr
	releaseKernel           func(k uintptr) int32
	setKernelArg            func(k uintptr, idx uint32, size uintptr, val unsafe.Pointer) int32
	getKernelWorkGroupInfo  func(k uintptr, d uintptr, param uint32, size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32
	createBuffer            func(c uintptr, flags uint64, size uintptr, host unsafe.Pointer, errc unsafe.Pointer) uintptr
	releaseMemObject        func(m uintptr) int32
	enqueueWriteBuffer      func(q uintptr, m uintptr, blocking uint32, off uintptr, size uintptr, ptr unsafe.Pointer, nw uint32, wl unsafe.Pointer, ev unsafe.Pointer) int32
	enqueueReadBuffer       func(q uintptr, m uintptr, blocking uint32, off uintptr, size uintptr, ptr unsafe.Pointer, nw uint32, wl unsafe.Pointer, ev unsafe.Pointer) int32
	enqueueNDRangeKernel    func(q uintptr, k uintptr, dim uint32, off unsafe.Pointer, global unsafe.Pointer, local unsafe.Pointer, nw uint32, wl unsafe.Pointer, ev unsafe.Pointer) int32
	finish                  func(q uintptr) int32
	waitForEvents           func(n uint32, evs unsafe.Pointer) int32
	getEventProfilingInfo   func(e uintptr, param uint32, size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32
	releaseEvent            func(e uintptr) int32
}

var (
	loadOnce sync.Once
	loaded   *Lib
	loadErr  error
)

// Load opens the ICD loader once per process, trying DefaultLibs; a
// missing loader is ErrNoOpenCL with the names tried.
func Load() (*Lib, error) {
	loadOnce.Do(func() { loaded, loadErr = open(DefaultLibs) })
	return loaded, loadErr
}

func open(names []string) (*Lib, error) {
	var tried []string
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		l := &Lib{path: name}
		if err := l.bind(h); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w: no OpenCL ICD loader (install ocl-icd-libopencl1 and a driver such as pocl-opencl-icd): %s", ErrNoOpenCL, strings.Join(tried, "; "))
}

// bind resolves every function, failing on the first one missing.
func (l *Lib) bind(h uintptr) error {
	fns := []struct {
		name string
		fp   any
	}{
		{"clGetPlatformIDs", &l.getPlatformIDs},
		{"clGetPlatformInfo", &l.getPlatformInfo},
		{"clGetDeviceIDs", &l.getDeviceIDs},
		{"clGetDeviceInfo", &l.getDeviceInfo},
		{"clCreateContext", &l.createContext},
		{"clReleaseContext", &l.releaseContext},
		{"clCreateCommandQueue", &l.createCommandQueue},
		{"clReleaseCommandQueue", &l.releaseCommandQueue},
		{"clCreateProgramWithSource", &l.createProgramWithSource},
		{"clCreateProgramWithBinary", &l.createProgramWithBinary},
		{"clBuildProgram", &l.buildProgram},
		{"clGetProgramBuildInfo", &l.getProgramBuildInfo},
		{"clGetProgramInfo", &l.getProgramInfo},
		{"clReleaseProgram", &l.releaseProgram},
		{"clCreateKernel", &l.createKernel},
		{"clReleaseKernel", &l.releaseKernel},
		{"clSetKernelArg", &l.setKernelArg},
		{"clGetKernelWorkGroupInfo", &l.getKernelWorkGroupInfo},
		{"clCreateBuffer", &l.createBuffer},
		{"clReleaseMemObject", &l.releaseMemObject},
		{"clEnqueueWriteBuffer", &l.enqueueWriteBuffer},
		{"clEnqueueReadBuffer", &l.enqueueReadBuffer},
		{"clEnqueueNDRangeKernel", &l.enqueueNDRangeKernel},
		{"clFinish", &l.finish},
		{"clWaitForEvents", &l.waitForEvents},
		{"clGetEventProfilingInfo", &l.getEventProfilingInfo},
		{"clReleaseEvent", &l.releaseEvent},
	}
	for _, f := range fns {
		sym, err := purego.Dlsym(h, f.name)
		if err != nil || sym == 0 {
			return fmt.Errorf("symbol %s missing", f.name)
		}
		purego.RegisterFunc(f.fp, sym)
	}
	return nil
}

func check(call string, code int32) error {
	if code != 0 {
		return &Error{Call: call, Code: code}
	}
	return nil
}

// info reads a variable-size info value with the two-call protocol.
func info(call string, get func(size uintptr, val unsafe.Pointer, sizeRet unsafe.Pointer) int32) ([]byte, error) {
	var n uintptr
	if err := check(call, get(0, nil, unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	if err := check(call, get(n, unsafe.Pointer(&b[0]), nil)); err != nil {
		return nil, err
	}
	return b, nil
}

func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// Platform and device info parameters.
const (
	platformName    = 0x0902
	platformVendor  = 0x0903
	platformVersion = 0x0901

	deviceType             = 0x1000
	deviceMaxComputeUnits  = 0x1002
	deviceMaxWorkItemDims  = 0x1003
	deviceMaxWorkGroupSize = 0x1004
	deviceMaxWorkItemSizes = 0x1005
	deviceMaxClock         = 0x100C
	deviceMaxMemAlloc      = 0x1010
	deviceGlobalMemSize    = 0x101F
	deviceLocalMemSize     = 0x1023
	deviceName             = 0x102B
	deviceVendor           = 0x102C
	driverVersion          = 0x102D
	deviceVersion          = 0x102F

	deviceTypeAll = 0xFFFFFFFF
)

// Platform is one OpenCL platform (an installed driver).
type Platform struct {
	ID      PlatformID
	Name    string
	Vendor  string
	Version string
}

// Platforms lists the installed platforms; none is ErrNoOpenCL.
func (l *Lib) Platforms() ([]Platform, error) {
	var n uint32
	code := l.getPlatformIDs(0, nil, unsafe.Pointer(&n))
	if code == PlatformNotFoundKHR || (code == 0 && n == 0) {
		return nil, fmt.Errorf("%w: the ICD loader %s found no driver (is an ICD such as pocl-opencl-icd installed in /etc/OpenCL/vendors?)", ErrNoOpenCL, l.path)
	}
	if err := check("clGetPlatformIDs", code); err != nil {
		return nil, err
	}
	ids := make([]uintptr, n)
	if err := check("clGetPlatformIDs", l.getPlatformIDs(n, unsafe.Pointer(&ids[0]), nil)); err != nil {
		return nil, err
	}
	out := make([]Platform, 0, n)
	for _, id := range ids {
		p := Platform{ID: PlatformID(id)}
		str := func(param uint32) string {
			b, _ := info("clGetPlatformInfo", func(size uintptr, val, sizeRet unsafe.Pointer) int32 {
				return l.getPlatformInfo(id, param, size, val, sizeRet)
			})
			return cstr(b)
		}
		p.Name, p.Vendor, p.Version = str(platformName), str(platformVendor), str(platformVersion)
		out = append(out, p)
	}
	return out, nil
}

// Device is one device of a platform, with what the tuner needs of it.
type Device struct {
	ID              DeviceID
	Name            string
	Vendor          string
	Version         string // the OpenCL version it supports
	DriverVersion   string
	Type            string // cpu, gpu, accelerator or other
	ComputeUnits    int
	ClockMHz        int
	MaxWorkGroup    int   // CL_DEVICE_MAX_WORK_GROUP_SIZE
	MaxWorkItems    []int // CL_DEVICE_MAX_WORK_ITEM_SIZES
	LocalMemBytes   int64
	GlobalMemBytes  int64
	MaxAllocBytes   int64
	PlatformName    string
	PlatformVersion string
}

// Devices lists the devices of platform p.
func (l *Lib) Devices(p Platform) ([]Device, error) {
	var n uint32
	code := l.getDeviceIDs(uintptr(p.ID), deviceTypeAll, 0, nil, unsafe.Pointer(&n))
	if code == -1 { // CL_DEVICE_NOT_FOUND
		return nil, nil
	}
	if err := check("clGetDeviceIDs", code); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ids := make([]uintptr, n)
	if err := check("clGetDeviceIDs", l.getDeviceIDs(uintptr(p.ID), deviceTypeAll, n, unsafe.Pointer(&ids[0]), nil)); err != nil {
		return nil, err
	}
	out := make([]Device, 0, n)
	for _, id := range ids {
		out = append(out, l.device(id, p))
	}
	return out, nil
}

func (l *Lib) device(id uintptr, p Platform) Device {
	raw := func(param uint32) []byte {
		b, _ := info("clGetDeviceInfo", func(size uintptr, val, sizeRet unsafe.Pointer) int32 {
			return l.getDeviceInfo(id, param, size, val, sizeRet)
		})
		return b
	}
	u := func(param uint32) uint64 {
		b := raw(param)
		var x uint64
		for i := len(b) - 1; i >= 0; i-- { // little-endian, 4 or 8 bytes
			x = x<<8 | uint64(b[i])
		}
		return x
	}
	d := Device{
		ID:              DeviceID(id),
		Name:            cstr(raw(deviceName)),
		Vendor:          cstr(raw(deviceVendor)),
		Version:         cstr(raw(deviceVersion)),
		DriverVersion:   cstr(raw(driverVersion)),
		ComputeUnits:    int(u(deviceMaxComputeUnits)),
		ClockMHz:        int(u(deviceMaxClock)),
		MaxWorkGroup:    int(u(deviceMaxWorkGroupSize)),
		LocalMemBytes:   int64(u(deviceLocalMemSize)),
		GlobalMemBytes:  int64(u(deviceGlobalMemSize)),
		MaxAllocBytes:   int64(u(deviceMaxMemAlloc)),
		PlatformName:    p.Name,
		PlatformVersion: p.Version,
	}
	switch t := u(deviceType); {
	case t&4 != 0:
		d.Type = "gpu"
	case t&2 != 0:
		d.Type = "cpu"
	case t&8 != 0:
		d.Type = "accelerator"
	default:
		d.Type = "other"
	}
	dims := int(u(deviceMaxWorkItemDims))
	if b := raw(deviceMaxWorkItemSizes); dims > 0 && len(b) >= dims*8 {
		for i := range dims {
			d.MaxWorkItems = append(d.MaxWorkItems, int(*(*uint64)(unsafe.Pointer(&b[i*8]))))
		}
	}
	return d
}

// Context is a context and a profiling command queue on one device.
type Context struct {
	l      *Lib
	Device Device
	ctx    uintptr
	queue  uintptr
}

// queueProfilingEnable is CL_QUEUE_PROFILING_ENABLE.
const queueProfilingEnable = 1 << 1

// NewContext makes a context and an in-order profiling queue on d.
func (l *Lib) NewContext(d Device) (*Context, error) {
	var code int32
	dev := uintptr(d.ID)
	c := l.createContext(nil, 1, unsafe.Pointer(&dev), 0, 0, unsafe.Pointer(&code))
	if err := check("clCreateContext", code); err != nil {
		return nil, err
	}
	q := l.createCommandQueue(c, dev, queueProfilingEnable, unsafe.Pointer(&code))
	if err := check("clCreateCommandQueue", code); err != nil {
		l.releaseContext(c)
		return nil, err
	}
	return &Context{l: l, Device: d, ctx: c, queue: q}, nil
}

// Release frees the queue and the context.
func (c *Context) Release() {
	c.l.releaseCommandQueue(c.queue)
	c.l.releaseContext(c.ctx)
}

// Program is a built program.
type Program struct {
	c  *Context
	id uintptr
	// Log is the compiler's build log (warnings, even on success).
	Log string
}

// BuildError is a failed build with the compiler's log.
type BuildError struct {
	Err error
	Log string
}

func (e *BuildError) Error() string {
	if e.Log == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Log
}

func (e *BuildError) Unwrap() error { return e.Err }

// BuildSource creates a program from source and builds it with options.
// A compiler failure is a *BuildError carrying the log.
func (c *Context) BuildSource(src, options string) (*Program, error) {
	if src == "" {
		return nil, errors.New("empty source")
	}
	var code int32
	s := append([]byte(src), 0)
	sp := unsafe.Pointer(&s[0])
	n := uintptr(len(src))
	id := c.l.createProgramWithSource(c.ctx, 1, unsafe.Pointer(&sp), unsafe.Pointer(&n), unsafe.Pointer(&code))
	if err := check("clCreateProgramWithSource", code); err != nil {
		return nil, err
	}
	return c.build(id, options)
}

// BuildBinary creates a program from a binary Binary returned and builds it.
func (c *Context) BuildBinary(bin []byte, options string) (*Program, error) {
	if len(bin) == 0 {
		return nil, errors.New("empty binary")
	}
	var code, status int32
	dev := uintptr(c.Device.ID)
	bp := unsafe.Pointer(&bin[0])
	n := uintptr(len(bin))
	id := c.l.createProgramWithBinary(c.ctx, 1, unsafe.Pointer(&dev), unsafe.Pointer(&n), unsafe.Pointer(&bp), unsafe.Pointer(&status), unsafe.Pointer(&code))
	if err := check("clCreateProgramWithBinary", code); err != nil {
		return nil, err
	}
	if err := check("clCreateProgramWithBinary", status); err != nil {
		c.l.releaseProgram(id)
		return nil, err
	}
	return c.build(id, options)
}

func (c *Context) build(id uintptr, options string) (*Program, error) {
	dev := uintptr(c.Device.ID)
	o := append([]byte(options), 0)
	code := c.l.buildProgram(id, 1, unsafe.Pointer(&dev), unsafe.Pointer(&o[0]), 0, 0)
	p := &Program{c: c, id: id, Log: c.buildLog(id)}
	if err := check("clBuildProgram", code); err != nil {
		c.l.releaseProgram(id)
		return nil, &BuildError{Err: err, Log: p.Log}
	}
	return p, nil
}

// programBuildLog is CL_PROGRAM_BUILD_LOG.
const programBuildLog = 0x1183

func (c *Context) buildLog(id uintptr) string {
	b, _ := info("clGetProgramBuildInfo", func(size uintptr, val, sizeRet unsafe.Pointer) int32 {
		return c.l.getProgramBuildInfo(id, uintptr(c.Device.ID), programBuildLog, size, val, sizeRet)
	})
	return cstr(b)
}

// Program info parameters.
const (
	programBinarySizes = 0x1165
	programBinaries    = 0x1166
)

// Binary returns the program's binary for its device, for a cache.
func (p *Program) Binary() ([]byte, error) {
	var n uintptr
	if err := check("clGetProgramInfo", p.c.l.getProgramInfo(p.id, programBinarySizes, unsafe.Sizeof(n), unsafe.Pointer(&n), nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("clGetProgramInfo: the driver gave an empty binary")
	}
	b := make([]byte, n)
	bp := unsafe.Pointer(&b[0])
	if err := check("clGetProgramInfo", p.c.l.getProgramInfo(p.id, programBinaries, unsafe.Sizeof(bp), unsafe.Pointer(&bp), nil)); err != nil {
		return nil, err
	}
	return b, nil
}

// Release frees the program.
func (p *Program) Release() { p.c.l.releaseProgram(p.id) }

// Kernel is one kernel of a built program.
type Kernel struct {
	c    *Context
	id   uintptr
	Name string
}

// Kernel creates the kernel called name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	var code int32
	n := append([]byte(name), 0)
	id := p.c.l.createKernel(p.id, unsafe.Pointer(&n[0]), unsafe.Pointer(&code))
	if err := check("clCreateKernel", code); err != nil {
		return nil, err
	}
	return &Kernel{c: p.c, id: id, Name: name}, nil
}

// Release frees the kernel.
func (k *Kernel) Release() { k.c.l.releaseKernel(k.id) }

// Kernel work-group info parameters.
const (
	kernelWorkGroupSize  = 0x11B0
	kernelLocalMemSize   = 0x11B2
	kernelPrivateMemSize = 0x11B4
)

// MaxWorkGroup is the largest work-group this kernel can be launched with
// on its device (CL_KERNEL_WORK_GROUP_SIZE).
func (k *Kernel) MaxWorkGroup() (int, error) {
	var n uintptr
	err := check("clGetKernelWorkGroupInfo", k.c.l.getKernelWorkGroupInfo(k.id, uintptr(k.c.Device.ID), kernelWorkGroupSize, unsafe.Sizeof(n), unsafe.Pointer(&n), nil))
	return int(n), err
}

// LocalMem is the local memory the kernel uses, in bytes.
func (k *Kernel) LocalMem() (int64, error) {
	var n uint64
	err := check("clGetKernelWorkGroupInfo", k.c.l.getKernelWorkGroupInfo(k.id, uintptr(k.c.Device.ID), kernelLocalMemSize, unsafe.Sizeof(n), unsafe.Pointer(&n), nil))
	return int64(n), err
}

// SetBuffer sets argument i to buffer b.
func (k *Kernel) SetBuffer(i int, b *Buffer) error {
	m := b.id
	return check("clSetKernelArg", k.c.l.setKernelArg(k.id, uint32(i), unsafe.Sizeof(m), unsafe.Pointer(&m)))
}

// SetBytes sets argument i to a scalar given as its bytes (host order).
func (k *Kernel) SetBytes(i int, val []byte) error {
	if len(val) == 0 {
		return errors.New("clSetKernelArg: empty value")
	}
	return check("clSetKernelArg", k.c.l.setKernelArg(k.id, uint32(i), uintptr(len(val)), unsafe.Pointer(&val[0])))
}

// Buffer is a device buffer.
type Buffer struct {
	c    *Context
	id   uintptr
	Size int
}

// memReadWrite is CL_MEM_READ_WRITE.
const memReadWrite = 1

// NewBuffer allocates a read-write buffer of size bytes.
func (c *Context) NewBuffer(size int) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("clCreateBuffer: size %d", size)
	}
	var code int32
	id := c.l.createBuffer(c.ctx, memReadWrite, uintptr(size), nil, unsafe.Pointer(&code))
	if err := check("clCreateBuffer", code); err != nil {
		return nil, err
	}
	return &Buffer{c: c, id: id, Size: size}, nil
}

// Release frees the buffer.
func (b *Buffer) Release() { b.c.l.releaseMemObject(b.id) }

// Write copies data into the buffer and waits for it.
func (b *Buffer) Write(data []byte) error {
	if len(data) != b.Size {
		return fmt.Errorf("clEnqueueWriteBuffer: %d bytes for a buffer of %d", len(data), b.Size)
	}
	return check("clEnqueueWriteBuffer", b.c.l.enqueueWriteBuffer(b.c.queue, b.id, 1, 0, uintptr(len(data)), unsafe.Pointer(&data[0]), 0, nil, nil))
}

// Read copies the buffer into data and waits for it.
func (b *Buffer) Read(data []byte) error {
	if len(data) != b.Size {
		return fmt.Errorf("clEnqueueReadBuffer: %d bytes for a buffer of %d", len(data), b.Size)
	}
	return check("clEnqueueReadBuffer", b.c.l.enqueueReadBuffer(b.c.queue, b.id, 1, 0, uintptr(len(data)), unsafe.Pointer(&data[0]), 0, nil, nil))
}

// Profiling info parameters.
const (
	profilingStart = 0x1282
	profilingEnd   = 0x1283
)

// Run launches k over global work-items in work-groups of local (both of
// 1 to 3 dims, the same count; nil local lets the driver choose), waits
// for it, and returns the kernel's time on the device in nanoseconds from
// its profiling event.
func (c *Context) Run(k *Kernel, global, local []int) (int64, error) {
	if len(global) == 0 || len(global) > 3 || (local != nil && len(local) != len(global)) {
		return 0, fmt.Errorf("clEnqueueNDRangeKernel: %d global dims, %d local", len(global), len(local))
	}
	var g, l [3]uintptr
	for i := range global {
		g[i] = uintptr(global[i])
	}
	lp := unsafe.Pointer(nil)
	if local != nil {
		for i := range local {
			l[i] = uintptr(local[i])
		}
		lp = unsafe.Pointer(&l[0])
	}
	var ev uintptr
	if err := check("clEnqueueNDRangeKernel", c.l.enqueueNDRangeKernel(c.queue, k.id, uint32(len(global)), nil, unsafe.Pointer(&g[0]), lp, 0, nil, unsafe.Pointer(&ev))); err != nil {
		return 0, err
	}
	defer c.l.releaseEvent(ev)
	if err := check("clWaitForEvents", c.l.waitForEvents(1, unsafe.Pointer(&ev))); err != nil {
		return 0, err
	}
	var start, end uint64
	if err := check("clGetEventProfilingInfo", c.l.getEventProfilingInfo(ev, profilingStart, 8, unsafe.Pointer(&start), nil)); err != nil {
		return 0, err
	}
	if err := check("clGetEventProfilingInfo", c.l.getEventProfilingInfo(ev, profilingEnd, 8, unsafe.Pointer(&end), nil)); err != nil {
		return 0, err
	}
	if end < start {
		return 0, fmt.Errorf("clGetEventProfilingInfo: end %d before start %d", end, start)
	}
	return int64(end - start), nil
}

// Finish waits for every command of the queue.
func (c *Context) Finish() error { return check("clFinish", c.l.finish(c.queue)) }
