/*
 * simjudge.judges.metrics._opd: the sums of streamed_opd_metrics over one episode's Phi, compiled.
 *
 * Why C: a recorder scores every episode at its end; the Python loop over ~100 potentials
 * (two compensated sums, a running max, a stagnation count) was ~75 us an episode, about a
 * quarter of a percent of every judged step. Here it is one pass over the list's doubles.
 *
 * Why this arithmetic: the same operations in the same order as StreamingOPD.update (Neumaier
 * steps on sums of non-negative terms, where abs(sum) >= abs(term) is sum >= term), on IEEE
 * doubles, built with -ffp-contract=off: bit for bit the streaming accumulator's sums.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* StreamingOPD's running state: reset(phi_0), then add() per further Phi, in its order. */
typedef struct {
    double top, phi_0, prev, tv, tv_c, regret, regret_c;
    Py_ssize_t stagnant;
} Sums;

static void sums_reset(Sums *s, double phi_0) {
    s->top = s->phi_0 = s->prev = phi_0;
    s->tv = s->tv_c = s->regret = s->regret_c = 0.0;
    s->stagnant = 0;
}

static void sums_add(Sums *s, double value, double epsilon) {
    double step = fabs(value - s->prev);
    double total = s->tv + step;
    s->tv_c += s->tv >= step ? (s->tv - total) + step : (step - total) + s->tv;
    s->tv = total;
    s->stagnant += step < epsilon;
    if (value > s->top) s->top = value;
    double gap = s->top - value;
    total = s->regret + gap;
    s->regret_c += s->regret >= gap ? (s->regret - total) + gap : (gap - total) + s->regret;
    s->regret = total;
    s->prev = value;
}

/* The sums over values, a non-empty list of floats in [0, 1]: 1, or 0 when it is not one. */
static int list_sums(PyObject *values, double epsilon, Sums *s, Py_ssize_t *n_out) {
    if (!PyList_CheckExact(values)) return 0;
    Py_ssize_t n = PyList_GET_SIZE(values);
    if (n == 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (!PyFloat_CheckExact(item)) return 0;
        double v = PyFloat_AS_DOUBLE(item);
        if (!(0.0 <= v && v <= 1.0)) return 0; /* NaN fails too */
    }
    sums_reset(s, PyFloat_AS_DOUBLE(PyList_GET_ITEM(values, 0)));
    for (Py_ssize_t i = 1; i < n; i++) sums_add(s, PyFloat_AS_DOUBLE(PyList_GET_ITEM(values, i)), epsilon);
    *n_out = n;
    return 1;
}

/* The sums over values, a bytes object of native doubles, all in [0, 1]: 1, or 0 when not. */
static int bytes_sums(PyObject *values, double epsilon, Sums *s, Py_ssize_t *n_out) {
    if (!PyBytes_CheckExact(values)) return 0;
    Py_ssize_t size = PyBytes_GET_SIZE(values);
    if (size == 0 || size % (Py_ssize_t)sizeof(double) != 0) return 0;
    Py_ssize_t n = size / (Py_ssize_t)sizeof(double);
    const char *raw = PyBytes_AS_STRING(values);
    double v;
    for (Py_ssize_t i = 0; i < n; i++) {
        memcpy(&v, raw + i * sizeof(double), sizeof(double));
        if (!(0.0 <= v && v <= 1.0)) return 0;
    }
    memcpy(&v, raw, sizeof(double));
    sums_reset(s, v);
    for (Py_ssize_t i = 1; i < n; i++) {
        memcpy(&v, raw + i * sizeof(double), sizeof(double));
        sums_add(s, v, epsilon);
    }
    *n_out = n;
    return 1;
}

PyDoc_STRVAR(sums_doc,
"sums(values, epsilon) -> (top, phi_0, last, tv, tv_c, regret, regret_c, stagnant) or None\n\n"
"The running sums of StreamingOPD after reset(values[0]) and update of the rest. None when\n"
"values is not a non-empty list of floats in [0, 1] (the caller then checks and converts).");

/* epsilon from args[1] of a call `call` that takes `want` arguments: 0, or -1 (raised). */
static int epsilon_arg(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *call,
                       double *epsilon) {
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments", call, want);
        return -1;
    }
    *epsilon = PyFloat_AsDouble(args[1]);
    return *epsilon == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *sums(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    double epsilon;
    if (epsilon_arg(args, nargs, 2, "sums(values, epsilon)", &epsilon) < 0) return NULL;
    Sums s;
    Py_ssize_t n;
    if (!list_sums(args[0], epsilon, &s, &n)) Py_RETURN_NONE;
    return Py_BuildValue("(dddddddn)", s.top, s.phi_0, s.prev, s.tv, s.tv_c, s.regret,
                         s.regret_c, s.stagnant);
}

/* opd.py's DELTA: the PPL denominator's delta. */
#define DELTA 1e-8

PyDoc_STRVAR(metrics_doc,
"metrics(values, epsilon, k) -> {'MC', 'MP', 'PPL', 'CRA', 'STR'} or None\n\n"
"streamed_opd_metrics(values, epsilon, k).as_dict() for a checked epsilon (float) and k (int\n"
">= 1), in one call: _assemble's arithmetic on the sums of sums(), in its order. values is a\n"
"list of floats or a bytes object of native doubles; None when it is not a non-empty one with\n"
"every value in [0, 1] (the caller then takes the checked path, which raises the usual error).");

static PyObject *metrics(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    double epsilon;
    if (epsilon_arg(args, nargs, 3, "metrics(values, epsilon, k)", &epsilon) < 0) return NULL;
    long k = PyLong_AsLong(args[2]);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 1) {
        PyErr_SetString(PyExc_ValueError, "metrics: k must be >= 1");
        return NULL;
    }
    Sums s;
    Py_ssize_t n;
    if (!list_sums(args[0], epsilon, &s, &n) && !bytes_sums(args[0], epsilon, &s, &n)) {
        Py_RETURN_NONE;
    }
    Py_ssize_t T = n - 1;
    double mp = s.top, phi_0 = s.phi_0, phi_T = s.prev;
    double tv = s.tv + s.tv_c, regret = s.regret + s.regret_c;
    double rise = phi_T - phi_0;
    double ppl = phi_T * (0.0 > rise ? 0.0 : rise) / (tv + DELTA); /* Python's max(rise, 0.0) */
    double str_ = T ? (double)s.stagnant / (double)T : 0.0;
    double cra = regret / (double)(T + 1);
    /* milestone_coverage(mp, k): the largest edge j / k <= mp */
    double scaled = floor((double)k * mp);
    long j = scaled < 0.0 ? 0 : scaled > (double)k ? k : (long)scaled;
    while (j < k && (double)(j + 1) / (double)k <= mp) j++;
    while (j > 0 && (double)j / (double)k > mp) j--;
    double mc = (double)j / (double)k;
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d}", "MC", mc, "MP", mp, "PPL", ppl, "CRA", cra,
                         "STR", str_);
}

static PyMethodDef methods[] = {
    {"sums", (PyCFunction)(void (*)(void))sums, METH_FASTCALL, sums_doc},
    {"metrics", (PyCFunction)(void (*)(void))metrics, METH_FASTCALL, metrics_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_opd", "The OPD metrics' sums over one episode, compiled (see _opd.c).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__opd(void) { return PyModule_Create(&module); }
