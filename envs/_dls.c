/*
 * simjudge.envs._dls: the arm's damped-least-squares IK step, compiled.
 *
 * Why C: the step runs once per control step of every env (the action's target pose to arm
 * joint targets) and is ~30 small numpy calls on 6x7 matrices, whose per-call overhead made it
 * a quarter of a MuJoCo control step. Here it is one call of a few hundred flops.
 *
 * Why this arithmetic: every sum runs in a fixed order on IEEE doubles, and the module is
 * built with -ffp-contract=off (no fused multiply-adds), so the step is bit-identical on any
 * x86-64 CPU; numpy's products go through the BLAS kernel its OpenBLAS picks for the CPU.
 *
 * The step (see simjudge.envs.robot.PandaSuction.differential_ik for the why of each part):
 *   e   = [position error capped at 5 cm, rotation vector capped at 0.3 rad]
 *   G   = J J^T + d^2 I                      (J: 6x7, d: damping > 0; G is positive definite)
 *   q   = q0 + J^T G^-1 e
 *   near a limit (any q0 outside [near_lo, near_hi]):
 *         q += p - J^T G^-1 J p,   p = gain (home - q0)      (a null-space pull towards home)
 *   if q leaves [lo, hi]: joint clamping, i.e. the joints that would leave are held at their
 *         limit and the rest solve again for the error they leave over (up to 7 passes).
 * NaN inputs give NaN joint targets (the env reports the physics error that follows).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define ROWS 6
#define ARM 7

/* n doubles from a sequence of numbers (tuple, list or 1-D array); -1 with an error set. */
static int read_vector(PyObject *obj, double *out, Py_ssize_t n, const char *name) {
    PyObject *fast = PySequence_Fast(obj, "");
    if (fast == NULL) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of %zd numbers", name, n);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd numbers, not %zd", name, n,
                     PySequence_Fast_GET_SIZE(fast));
        Py_DECREF(fast);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyFloat_CheckExact(items[i]) ? PyFloat_AS_DOUBLE(items[i]) : PyFloat_AsDouble(items[i]);
    }
    Py_DECREF(fast);
    if (PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s must hold numbers", name);
        return -1;
    }
    return 0;
}

/* A float64 buffer of the given dimensions (columns >= min_cols); strides kept in view. */
static int get_matrix(PyObject *obj, Py_buffer *view, int ndim, Py_ssize_t rows, Py_ssize_t min_cols,
                      int writable, const char *name) {
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a%s float64 numpy array", name, writable ? " writable" : "");
        return -1;
    }
    int ok = view->format != NULL && strcmp(view->format, "d") == 0 && view->ndim == ndim;
    if (ok && ndim == 1) ok = view->shape[0] >= min_cols;
    if (ok && ndim == 2) ok = view->shape[0] == rows && view->shape[1] >= min_cols;
    if (!ok) {
        if (ndim == 1)
            PyErr_Format(PyExc_ValueError, "%s must be a 1-D float64 array of at least %zd values", name, min_cols);
        else
            PyErr_Format(PyExc_ValueError, "%s must be a %zd-row 2-D float64 array with at least %zd columns",
                         name, rows, min_cols);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static double at2(const Py_buffer *view, Py_ssize_t row, Py_ssize_t col) {
    return *(const double *)((const char *)view->buf + row * view->strides[0] + col * view->strides[1]);
}

static double at1(const Py_buffer *view, Py_ssize_t i) {
    return *(const double *)((const char *)view->buf + i * view->strides[0]);
}

/* Cholesky factor (lower) of a positive-definite 6x6 matrix. */
static void cholesky(const double g[ROWS][ROWS], double l[ROWS][ROWS]) {
    memset(l, 0, sizeof(double) * ROWS * ROWS);
    for (int i = 0; i < ROWS; i++) {
        for (int j = 0; j <= i; j++) {
            double s = g[i][j];
            for (int k = 0; k < j; k++) s -= l[i][k] * l[j][k];
            l[i][j] = (i == j) ? sqrt(s) : s / l[j][j];
        }
    }
}

/* x = (L L^T)^-1 b */
static void cholesky_solve(const double l[ROWS][ROWS], const double b[ROWS], double x[ROWS]) {
    double y[ROWS];
    for (int i = 0; i < ROWS; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++) s -= l[i][k] * y[k];
        y[i] = s / l[i][i];
    }
    for (int i = ROWS - 1; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < ROWS; k++) s -= l[k][i] * x[k];
        x[i] = s / l[i][i];
    }
}

/* G = sum over the joints in use of J[:, k] J[:, k]^T, plus d^2 on the diagonal. */
static void gram(const double j[ROWS][ARM], const int use[ARM], double d2, double g[ROWS][ROWS]) {
    for (int r = 0; r < ROWS; r++) {
        for (int c = 0; c < ROWS; c++) {
            double s = 0.0;
            for (int k = 0; k < ARM; k++)
                if (use[k]) s += j[r][k] * j[c][k];
            g[r][c] = r == c ? s + d2 : s;
        }
    }
}

/* Position error capped at 5 cm, then the world-frame rotation vector from the current
 * orientation to the target's, capped at 0.3 rad (quaternions x, y, z, w). */
static void pose_error(const double p[3], const double o[4], const double t[3], const double to[4],
                       double e[ROWS]) {
    double dx = t[0] - p[0], dy = t[1] - p[1], dz = t[2] - p[2];
    double norm = sqrt(dx * dx + dy * dy + dz * dz);
    if (!(norm <= 0.05)) {
        double scale = 0.05 / norm;
        dx *= scale, dy *= scale, dz *= scale;
    }
    e[0] = dx, e[1] = dy, e[2] = dz;
    /* q = target * conj(current) */
    double x1 = to[0], y1 = to[1], z1 = to[2], w1 = to[3];
    double x2 = -o[0], y2 = -o[1], z2 = -o[2], w2 = o[3];
    double w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2;
    double x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2;
    double y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2;
    double z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2;
    if (w < 0.0) x = -x, y = -y, z = -z, w = -w;
    double sine = sqrt(x * x + y * y + z * z);
    if (sine < 1e-12) {
        e[3] = e[4] = e[5] = 0.0;
        return;
    }
    double angle = 2.0 * atan2(sine, w);
    if (angle > 0.3) angle = 0.3;
    double scale = angle / sine;
    e[3] = x * scale, e[4] = y * scale, e[5] = z * scale;
}

static int outside(const double q[ARM], const double lo[ARM], const double hi[ARM]) {
    for (int k = 0; k < ARM; k++)
        if (q[k] < lo[k] || q[k] > hi[k]) return 1;
    return 0;
}

/* min(max(v, lo), hi), as numpy's clip: NaN stays NaN, and the upper bound wins if lo > hi. */
static double clamp(double v, double lo, double hi) {
    double m = v < lo ? lo : v;
    return m > hi ? hi : m;
}

/* Joints that would leave their range held at it; the free ones solve for the rest. */
static void clamped_step(const double j[ROWS][ARM], const double e[ROWS], const double q0[ARM], double d2,
                         const double lo[ARM], const double hi[ARM], double q[ARM]) {
    int held[ARM], free_[ARM];
    for (int k = 0; k < ARM; k++) held[k] = q[k] < lo[k] || q[k] > hi[k];
    for (int pass = 0; pass < ARM; pass++) { /* each pass holds at least one more joint */
        int any_free = 0;
        for (int k = 0; k < ARM; k++) {
            q[k] = clamp(q[k], lo[k], hi[k]);
            free_[k] = !held[k];
            any_free |= free_[k];
        }
        if (!any_free) break;
        double rest[ROWS], g[ROWS][ROWS], l[ROWS][ROWS], solution[ROWS];
        for (int r = 0; r < ROWS; r++) {
            double s = 0.0;
            for (int k = 0; k < ARM; k++)
                if (held[k]) s += j[r][k] * (q[k] - q0[k]);
            rest[r] = e[r] - s;
        }
        gram(j, free_, d2, g);
        cholesky(g, l);
        cholesky_solve(l, rest, solution);
        int any_out = 0;
        for (int k = 0; k < ARM; k++) {
            if (free_[k]) {
                double s = 0.0;
                for (int r = 0; r < ROWS; r++) s += j[r][k] * solution[r];
                q[k] = q0[k] + s;
            }
            if (q[k] < lo[k] || q[k] > hi[k]) held[k] = any_out = 1;
        }
        if (!any_out) return;
    }
    for (int k = 0; k < ARM; k++) q[k] = clamp(q[k], lo[k], hi[k]);
}

PyDoc_STRVAR(step_doc,
"step(jacobian, q, position, orientation, target, target_orientation, damping, bounds, gain, out)\n"
"--\n\n"
"One damped-least-squares IK step of the arm, written into ``out`` (7 float64).\n\n"
"``jacobian``: 6 x n float64 array (n >= 7; the first 7 columns are the arm's); ``q``: the\n"
"joint positions (float64, first 7 used); ``position`` (3) and ``orientation`` (4, x y z w):\n"
"the link's pose now; ``target`` (3) and ``target_orientation`` (4): the pose wanted;\n"
"``damping`` > 0; ``bounds``: 5 x 7 float64 array of rows near-lower, near-upper, lower,\n"
"upper limit and home posture; ``gain``: the share of the way home a step near a limit adds.");

static PyObject *step(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 10) {
        PyErr_Format(PyExc_TypeError, "step() takes 10 arguments (%zd given)", nargs);
        return NULL;
    }
    double p[3], o[4], t[3], to[4];
    if (read_vector(args[2], p, 3, "position") || read_vector(args[3], o, 4, "orientation")
        || read_vector(args[4], t, 3, "target") || read_vector(args[5], to, 4, "target_orientation"))
        return NULL;
    double damping = PyFloat_AsDouble(args[6]);
    double gain = PyFloat_AsDouble(args[8]);
    if (PyErr_Occurred()) return NULL;
    if (!(damping > 0.0)) {
        PyErr_Format(PyExc_ValueError, "damping must be > 0 (got %R): the damped step solves J J^T + damping^2 I",
                     args[6]);
        return NULL;
    }
    Py_buffer jv, qv, bv, ov;
    if (get_matrix(args[0], &jv, 2, ROWS, ARM, 0, "jacobian")) return NULL;
    if (get_matrix(args[1], &qv, 1, 0, ARM, 0, "q")) goto release_j;
    if (get_matrix(args[7], &bv, 2, 5, ARM, 0, "bounds")) goto release_q;
    if (get_matrix(args[9], &ov, 1, 0, ARM, 1, "out")) goto release_b;

    double j[ROWS][ARM], q0[ARM], near_lo[ARM], near_hi[ARM], lo[ARM], hi[ARM], home[ARM], q[ARM];
    for (int r = 0; r < ROWS; r++)
        for (int k = 0; k < ARM; k++) j[r][k] = at2(&jv, r, k);
    for (int k = 0; k < ARM; k++) {
        q0[k] = at1(&qv, k);
        near_lo[k] = at2(&bv, 0, k), near_hi[k] = at2(&bv, 1, k);
        lo[k] = at2(&bv, 2, k), hi[k] = at2(&bv, 3, k), home[k] = at2(&bv, 4, k);
    }
    double e[ROWS], g[ROWS][ROWS], l[ROWS][ROWS], solution[ROWS];
    static const int all[ARM] = {1, 1, 1, 1, 1, 1, 1};
    double d2 = damping * damping;
    pose_error(p, o, t, to, e);
    gram(j, all, d2, g);
    cholesky(g, l);
    cholesky_solve(l, e, solution);
    for (int k = 0; k < ARM; k++) {
        double s = 0.0;
        for (int r = 0; r < ROWS; r++) s += j[r][k] * solution[r];
        q[k] = q0[k] + s;
    }
    if (outside(q0, near_lo, near_hi)) {
        double pull[ARM], jp[ROWS], back[ROWS];
        for (int k = 0; k < ARM; k++) pull[k] = gain * (home[k] - q0[k]);
        for (int r = 0; r < ROWS; r++) {
            double s = 0.0;
            for (int k = 0; k < ARM; k++) s += j[r][k] * pull[k];
            jp[r] = s;
        }
        cholesky_solve(l, jp, back);
        for (int k = 0; k < ARM; k++) {
            double s = 0.0;
            for (int r = 0; r < ROWS; r++) s += j[r][k] * back[r];
            q[k] += pull[k] - s;
        }
    }
    if (outside(q, lo, hi)) clamped_step(j, e, q0, d2, lo, hi, q);
    for (int k = 0; k < ARM; k++)
        *(double *)((char *)ov.buf + k * ov.strides[0]) = q[k];

    PyBuffer_Release(&ov);
    PyBuffer_Release(&bv);
    PyBuffer_Release(&qv);
    PyBuffer_Release(&jv);
    Py_RETURN_NONE;
release_b:
    PyBuffer_Release(&bv);
release_q:
    PyBuffer_Release(&qv);
release_j:
    PyBuffer_Release(&jv);
    return NULL;
}

static PyMethodDef methods[] = {
    {"step", (PyCFunction)(void (*)(void))step, METH_FASTCALL, step_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_dls", "The arm's damped-least-squares IK step, compiled (see _dls.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__dls(void) { return PyModule_Create(&module); }
