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

PyDoc_STRVAR(sums_doc,
"sums(values, epsilon) -> (top, phi_0, last, tv, tv_c, regret, regret_c, stagnant) or None\n\n"
"The running sums of StreamingOPD after reset(values[0]) and update of the rest. None when\n"
"values is not a non-empty list of floats in [0, 1] (the caller then checks and converts).");

static PyObject *sums(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "sums(values, epsilon) takes 2 arguments");
        return NULL;
    }
    PyObject *values = args[0];
    double epsilon = PyFloat_AsDouble(args[1]);
    if (epsilon == -1.0 && PyErr_Occurred()) return NULL;
    if (!PyList_CheckExact(values)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(values);
    if (n == 0) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (!PyFloat_CheckExact(item)) Py_RETURN_NONE;
        double v = PyFloat_AS_DOUBLE(item);
        if (!(0.0 <= v && v <= 1.0)) Py_RETURN_NONE; /* NaN fails too */
    }
    double phi_0 = PyFloat_AS_DOUBLE(PyList_GET_ITEM(values, 0));
    double prev = phi_0, top = phi_0;
    double tv = 0.0, tv_c = 0.0, regret = 0.0, regret_c = 0.0;
    Py_ssize_t stagnant = 0;
    for (Py_ssize_t i = 1; i < n; i++) {
        double value = PyFloat_AS_DOUBLE(PyList_GET_ITEM(values, i));
        double step = fabs(value - prev);
        double total = tv + step;
        tv_c += tv >= step ? (tv - total) + step : (step - total) + tv;
        tv = total;
        stagnant += step < epsilon;
        if (value > top) top = value;
        double gap = top - value;
        total = regret + gap;
        regret_c += regret >= gap ? (regret - total) + gap : (gap - total) + regret;
        regret = total;
        prev = value;
    }
    return Py_BuildValue("(dddddddn)", top, phi_0, prev, tv, tv_c, regret, regret_c, stagnant);
}

static PyMethodDef methods[] = {
    {"sums", (PyCFunction)(void (*)(void))sums, METH_FASTCALL, sums_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_opd", "The OPD metrics' sums over one episode, compiled (see _opd.c).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__opd(void) { return PyModule_Create(&module); }
