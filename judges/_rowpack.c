/*
 * simjudge.judges._rowpack: a recorder's row as bytes, and back; an episode's rows in one log.
 *
 * Why: JudgeRecord keeps a row per step for the whole episode (the judges' fast-path results
 * with their notes, the env's progress, success and state summary, the action, flags). As
 * Python objects that is ~20 small tuples, dicts, lists and floats a step, all allocated where
 * the physics' data would otherwise stay cached and all freed, cold, at the next episode's end
 * (~200 us an episode, measured). Packed, a row is one object.
 *
 * What: only exact built-in types whose copy is indistinguishable from the original by value
 * and type: None, True, False, int (64-bit), float (its 8 bytes: -0.0 and NaN payloads kept),
 * str, bytes, and tuple, list and dict of these, nested at most MAX_DEPTH deep. Anything else
 * (a subclass, a numpy scalar or array, any other object) makes pack() return None and the
 * caller keeps the row as it is: nothing is ever converted. No Python code runs while packing
 * (exact types only: no __hash__, __eq__ or __index__ of the caller's).
 *
 * RowLog holds an episode's rows packed back to back in one buffer, with each row's Phi as a
 * double (see its comment below). Its add_row() is the recorder's common row packed in one call,
 * with pack()'s bytes: it also looks up three keys in info (an exact dict) and copies an array
 * action of the recorder's form through the buffer protocol (its exact type checked first).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 32
#define SMALL 512

enum { PACKED = 0, UNPACKABLE = 1, FAILED = -1 };

typedef struct {
    char *data;
    Py_ssize_t len, cap;
    char small[SMALL];
} Buffer;

static int grow(Buffer *buf, Py_ssize_t more) {
    Py_ssize_t cap = buf->cap * 2;
    while (cap < buf->len + more) cap *= 2;
    char *data;
    if (buf->data == buf->small) {
        data = PyMem_Malloc(cap);
        if (data != NULL) memcpy(data, buf->small, buf->len);
    } else {
        data = PyMem_Realloc(buf->data, cap);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return FAILED;
    }
    buf->data = data;
    buf->cap = cap;
    return PACKED;
}

/* Room for `more` bytes; the common case (it fits) is one comparison, inlined. */
static inline int reserve(Buffer *buf, Py_ssize_t more) {
    return buf->len + more <= buf->cap ? PACKED : grow(buf, more);
}

/* A tag and a 32-bit size (strings, bytes, containers), with room for `payload` more bytes. */
static inline int put_sized(Buffer *buf, char tag, Py_ssize_t size, Py_ssize_t payload) {
    if (size > (Py_ssize_t)UINT32_MAX) return UNPACKABLE;
    if (reserve(buf, 5 + payload) != PACKED) return FAILED;
    uint32_t n = (uint32_t)size;
    char *out = buf->data + buf->len;
    out[0] = tag;
    memcpy(out + 1, &n, 4);
    buf->len += 5;
    return PACKED;
}

static int pack_into(Buffer *buf, PyObject *obj, int depth) {
    if (reserve(buf, 9) != PACKED) return FAILED; /* any scalar: a tag and 8 bytes */
    char *out = buf->data + buf->len;
    if (obj == Py_None || obj == Py_True || obj == Py_False) {
        out[0] = obj == Py_None ? 'N' : obj == Py_True ? 'T' : 'F';
        buf->len += 1;
        return PACKED;
    }
    if (PyFloat_CheckExact(obj)) {
        double value = PyFloat_AS_DOUBLE(obj);
        out[0] = 'd';
        memcpy(out + 1, &value, 8);
        buf->len += 9;
        return PACKED;
    }
    if (PyLong_CheckExact(obj)) {
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow != 0) return UNPACKABLE;
        if (value == -1 && PyErr_Occurred()) return FAILED;
        out[0] = 'i';
        memcpy(out + 1, &value, 8);
        buf->len += 9;
        return PACKED;
    }
    if (depth >= MAX_DEPTH) return UNPACKABLE;
    if (PyUnicode_CheckExact(obj)) {
        Py_ssize_t n;
        const char *text;
        if (PyUnicode_IS_COMPACT_ASCII(obj)) { /* its characters are its UTF-8 */
            n = PyUnicode_GET_LENGTH(obj);
            text = (const char *)PyUnicode_DATA(obj);
        } else if ((text = PyUnicode_AsUTF8AndSize(obj, &n)) == NULL) {
            PyErr_Clear(); /* e.g. a lone surrogate: kept as the object, not converted */
            return UNPACKABLE;
        }
        int status = put_sized(buf, 's', n, n);
        if (status != PACKED) return status;
        memcpy(buf->data + buf->len, text, n);
        buf->len += n;
        return PACKED;
    }
    if (PyBytes_CheckExact(obj)) {
        Py_ssize_t n = PyBytes_GET_SIZE(obj);
        int status = put_sized(buf, 'b', n, n);
        if (status != PACKED) return status;
        memcpy(buf->data + buf->len, PyBytes_AS_STRING(obj), n);
        buf->len += n;
        return PACKED;
    }
    if (PyTuple_CheckExact(obj) || PyList_CheckExact(obj)) {
        /* the items in place (no Python code runs here, so a list cannot change meanwhile) */
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        PyObject **items = PySequence_Fast_ITEMS(obj);
        int status = put_sized(buf, PyTuple_CheckExact(obj) ? '(' : '[', n, 0);
        for (Py_ssize_t i = 0; status == PACKED && i < n; i++) {
            status = pack_into(buf, items[i], depth + 1);
        }
        return status;
    }
    if (PyDict_CheckExact(obj)) {
        int status = put_sized(buf, '{', PyDict_GET_SIZE(obj), 0);
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (status == PACKED && PyDict_Next(obj, &pos, &key, &value)) {
            status = pack_into(buf, key, depth + 1);
            if (status == PACKED) status = pack_into(buf, value, depth + 1);
        }
        return status;
    }
    return UNPACKABLE;
}

PyDoc_STRVAR(pack_doc,
"pack(obj) -> bytes or None\n\n"
"obj as bytes when it is made only of None, bools, 64-bit ints, floats, str, bytes, and\n"
"tuples, lists and dicts of these (exact types, nested at most 32 deep); None otherwise.");

static PyObject *pack(PyObject *self, PyObject *obj) {
    (void)self;
    Buffer buf;
    buf.data = buf.small;
    buf.len = 0;
    buf.cap = SMALL;
    int status = pack_into(&buf, obj, 0);
    PyObject *result = NULL;
    if (status == PACKED) {
        result = PyBytes_FromStringAndSize(buf.data, buf.len);
    } else if (status == UNPACKABLE) {
        result = Py_NewRef(Py_None);
    }
    if (buf.data != buf.small) PyMem_Free(buf.data);
    return result;
}

/* The info keys a recorder's row reads (interned once, at import). */
static PyObject *KEY_PROGRESS, *KEY_SUCCESS, *KEY_STATE, *ATTR_DTYPE;

/* info[key] or None (a borrowed reference); NULL with an exception set on a lookup error. */
static PyObject *info_get(PyObject *info, PyObject *key) {
    PyObject *value = PyDict_GetItemWithError(info, key);
    return value != NULL || PyErr_Occurred() ? value : Py_None;
}

/* The action's bytes when it is of `form` = (array type, dtype object, shape) and C-contiguous
 * (what action.tobytes() gives), None when it is None; UNPACKABLE otherwise. */
static int pack_action(Buffer *buf, PyObject *action, PyObject *form) {
    if (action == Py_None) return pack_into(buf, action, 1); /* the reset's row: no action */
    if (!PyTuple_CheckExact(form) || PyTuple_GET_SIZE(form) != 3) return UNPACKABLE;
    PyObject *type = PyTuple_GET_ITEM(form, 0), *dtype = PyTuple_GET_ITEM(form, 1);
    PyObject *shape = PyTuple_GET_ITEM(form, 2);
    if ((PyObject *)Py_TYPE(action) != type || !PyTuple_CheckExact(shape)) return UNPACKABLE;
    /* the dtype by identity (numpy's own descriptor object), not the buffer's format string:
     * a buffer with its format is built afresh for each array, in numpy code that is cold
     * after a physics step */
    PyObject *own = PyObject_GetAttr(action, ATTR_DTYPE);
    if (own == NULL) {
        PyErr_Clear();
        return UNPACKABLE;
    }
    int same_dtype = own == dtype;
    Py_DECREF(own);
    if (!same_dtype) return UNPACKABLE;
    Py_buffer view;
    if (PyObject_GetBuffer(action, &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear(); /* e.g. a strided view: the caller's general path copies it */
        return UNPACKABLE;
    }
    int status = UNPACKABLE;
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    int same = view.ndim == ndim;
    for (Py_ssize_t i = 0; same && i < ndim; i++) {
        PyObject *size = PyTuple_GET_ITEM(shape, i);
        same = PyLong_CheckExact(size) && PyLong_AsSsize_t(size) == view.shape[i];
    }
    if (PyErr_Occurred()) {
        status = FAILED;
    } else if (same) {
        status = put_sized(buf, 'b', view.len, view.len);
        if (status == PACKED) {
            memcpy(buf->data + buf->len, view.buf, view.len);
            buf->len += view.len;
        }
    }
    PyBuffer_Release(&view);
    return status;
}

/* The recorder's common row, (fast, info.get('progress'), info.get('success'), info.get('state')
 * if states else None, action.tobytes(), reward, terminated, truncated), packed into buf as
 * pack() would pack that tuple: args are RowLog.add_row's. UNPACKABLE when info is not an exact
 * dict, the action not of the form, or a value not plain. */
static int pack_row_into(Buffer *buf, PyObject *const *args) {
    PyObject *info = args[1];
    if (!PyDict_CheckExact(info)) return UNPACKABLE;
    int states = PyObject_IsTrue(args[2]);
    if (states < 0) return FAILED;
    PyObject *progress = info_get(info, KEY_PROGRESS);
    PyObject *success = progress != NULL ? info_get(info, KEY_SUCCESS) : NULL;
    PyObject *state = success == NULL ? NULL : states ? info_get(info, KEY_STATE) : Py_None;
    if (state == NULL) return FAILED;
    int status = put_sized(buf, '(', 8, 0);
    PyObject *head[4] = {args[0], progress, success, state};
    for (int i = 0; status == PACKED && i < 4; i++) status = pack_into(buf, head[i], 1);
    if (status == PACKED) status = pack_action(buf, args[3], args[4]);
    for (int i = 5; status == PACKED && i < 8; i++) status = pack_into(buf, args[i], 1);
    return status;
}

typedef struct {
    const char *data;
    Py_ssize_t pos, len;
} Reader;

static PyObject *corrupt(void) {
    PyErr_SetString(PyExc_ValueError,
                    "not a packed row (truncated or altered bytes); only unpack what pack() made");
    return NULL;
}

static int take(Reader *in, void *out, Py_ssize_t n) {
    if (in->len - in->pos < n) return -1;
    memcpy(out, in->data + in->pos, n);
    in->pos += n;
    return 0;
}

static PyObject *unpack_from(Reader *in, int depth) {
    char tag;
    if (depth > MAX_DEPTH || take(in, &tag, 1) < 0) return corrupt();
    switch (tag) {
    case 'N': return Py_NewRef(Py_None);
    case 'T': return Py_NewRef(Py_True);
    case 'F': return Py_NewRef(Py_False);
    case 'd': {
        double value;
        if (take(in, &value, sizeof value) < 0) return corrupt();
        return PyFloat_FromDouble(value);
    }
    case 'i': {
        long long value;
        if (take(in, &value, sizeof value) < 0) return corrupt();
        return PyLong_FromLongLong(value);
    }
    default: break;
    }
    uint32_t size;
    if (take(in, &size, sizeof size) < 0) return corrupt();
    Py_ssize_t n = (Py_ssize_t)size;
    if (tag == 's' || tag == 'b') {
        if (in->len - in->pos < n) return corrupt();
        const char *start = in->data + in->pos;
        in->pos += n;
        return tag == 's' ? PyUnicode_DecodeUTF8(start, n, "strict")
                          : PyBytes_FromStringAndSize(start, n);
    }
    if (tag == '(' || tag == '[') {
        if (in->len - in->pos < n) return corrupt(); /* each item takes a byte at least */
        PyObject *seq = tag == '(' ? PyTuple_New(n) : PyList_New(n);
        if (seq == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = unpack_from(in, depth + 1);
            if (item == NULL) {
                Py_DECREF(seq);
                return NULL;
            }
            if (tag == '(') PyTuple_SET_ITEM(seq, i, item);
            else PyList_SET_ITEM(seq, i, item);
        }
        return seq;
    }
    if (tag == '{') {
        if ((in->len - in->pos) / 2 < n) return corrupt();
        PyObject *dict = PyDict_New();
        if (dict == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *key = unpack_from(in, depth + 1);
            PyObject *value = key != NULL ? unpack_from(in, depth + 1) : NULL;
            int status = value != NULL ? PyDict_SetItem(dict, key, value) : -1;
            Py_XDECREF(key);
            Py_XDECREF(value);
            if (status < 0) {
                Py_DECREF(dict);
                return NULL;
            }
        }
        return dict;
    }
    return corrupt();
}

PyDoc_STRVAR(unpack_doc,
"unpack(data) -> object\n\n"
"The object pack() made data from (equal, with the same types). ValueError when data is not\n"
"a whole packed object.");

static PyObject *unpack(PyObject *self, PyObject *data) {
    (void)self;
    if (!PyBytes_CheckExact(data)) {
        PyErr_SetString(PyExc_TypeError, "unpack() takes the bytes pack() returned");
        return NULL;
    }
    Reader in = {PyBytes_AS_STRING(data), 0, PyBytes_GET_SIZE(data)};
    PyObject *obj = unpack_from(&in, 0);
    if (obj != NULL && in.pos != in.len) {
        Py_DECREF(obj);
        return corrupt();
    }
    return obj;
}

/* ---------------------------------------------------------------------------------------------
 * RowLog: an episode's rows, packed back to back in one growing buffer, and each row's Phi.
 *
 * Why: a bytes object per row is an allocation per step whose memory is all freed, cold, at the
 * next episode's end, and the recorder's list of Phi floats is read cold by the OPD sums there.
 * Here a row is bytes in one buffer (sized from the previous episode: no reallocation in the
 * common case) and Phi one double in an array; a row that is not plain is kept as its object.
 */

typedef struct {
    Py_ssize_t start, size; /* the row's bytes in data; size -1: the row is the object `row` */
    double phi;             /* Phi when phi_object is NULL (an exact float) */
    PyObject *phi_object;   /* Phi when it is not an exact float (None, or what the judge gave) */
    PyObject *row;          /* the row kept as it is (not plain), else NULL */
} Entry;

typedef struct {
    PyObject_HEAD
    Buffer buf;
    Entry *entries;
    Py_ssize_t n, room;
} RowLog;

static int rowlog_init(RowLog *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"capacity", NULL};
    Py_ssize_t capacity = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|n:RowLog", names, &capacity)) return -1;
    if (self->buf.data != NULL) {
        PyErr_SetString(PyExc_TypeError, "a RowLog is initialised once");
        return -1;
    }
    capacity = capacity < 1024 ? 1024 : capacity;
    self->buf.data = PyMem_Malloc(capacity);
    if (self->buf.data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->buf.len = 0;
    self->buf.cap = capacity;
    return 0;
}

static int rowlog_traverse(RowLog *self, visitproc visit, void *arg) {
    for (Py_ssize_t i = 0; i < self->n; i++) {
        Py_VISIT(self->entries[i].phi_object);
        Py_VISIT(self->entries[i].row);
    }
    return 0;
}

static int rowlog_clear(RowLog *self) {
    Py_ssize_t n = self->n;
    self->n = 0; /* emptied first: what a decref below runs finds no dangling entry */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_CLEAR(self->entries[i].phi_object);
        Py_CLEAR(self->entries[i].row);
    }
    return 0;
}

static void rowlog_dealloc(RowLog *self) {
    PyObject_GC_UnTrack(self);
    rowlog_clear(self);
    PyMem_Free(self->entries);
    PyMem_Free(self->buf.data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* 0 when a method `name` got its `n` arguments and the log is initialised, else -1 (raised). */
static int callable_with(RowLog *self, const char *name, Py_ssize_t nargs, Py_ssize_t n) {
    if (nargs != n) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, n, nargs);
        return -1;
    }
    if (self->buf.data != NULL) return 0;
    PyErr_SetString(PyExc_ValueError, "RowLog.__init__ was not called");
    return -1;
}

/* A new entry for a row at [start, buf.len) (row NULL) or kept as `row`, with Phi `phi`. */
static int add_entry(RowLog *self, Py_ssize_t start, PyObject *row, PyObject *phi) {
    if (self->n == self->room) {
        Py_ssize_t room = self->room ? 2 * self->room : 128;
        Entry *entries = PyMem_Realloc(self->entries, room * sizeof(Entry));
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->entries = entries;
        self->room = room;
    }
    Entry *entry = &self->entries[self->n++];
    entry->start = start;
    entry->size = row == NULL ? self->buf.len - start : -1;
    entry->row = Py_XNewRef(row);
    if (PyFloat_CheckExact(phi)) {
        entry->phi = PyFloat_AS_DOUBLE(phi);
        entry->phi_object = NULL;
    } else {
        entry->phi = 0.0;
        entry->phi_object = Py_NewRef(phi);
    }
    return 0;
}

PyDoc_STRVAR(add_row_doc,
"add_row(fast, info, states, action, form, reward, terminated, truncated) -> bool\n\n"
"Add the row (fast, info.get('progress'), info.get('success'), info.get('state') if states\n"
"else None, action.tobytes(), reward, terminated, truncated) packed as pack() packs it, with\n"
"Phi fast[1], in one call; for an exact tuple fast, a dict info and an action of form =\n"
"(array type, dtype object, shape), C-contiguous, or None (the reset's row: packed as None,\n"
"whatever form). False (nothing added) when any of that\n"
"does not hold or a value is not plain: the caller then builds the row and calls add().");

static PyObject *rowlog_add_row(RowLog *self, PyObject *const *args, Py_ssize_t nargs) {
    if (callable_with(self, "add_row", nargs, 8) < 0) return NULL;
    PyObject *fast = args[0];
    if (!PyTuple_CheckExact(fast) || PyTuple_GET_SIZE(fast) < 2) Py_RETURN_FALSE;
    Py_ssize_t start = self->buf.len;
    int status = pack_row_into(&self->buf, args);
    if (status == PACKED && add_entry(self, start, NULL, PyTuple_GET_ITEM(fast, 1)) < 0) {
        status = FAILED;
    }
    if (status != PACKED) self->buf.len = start;
    if (status == FAILED) return NULL;
    return Py_NewRef(status == PACKED ? Py_True : Py_False);
}

PyDoc_STRVAR(add_doc,
"add(row, phi) -> None\n\n"
"Add row, packed as pack() packs it when it is plain, else kept as the object; phi is its Phi.");

static PyObject *rowlog_add(RowLog *self, PyObject *const *args, Py_ssize_t nargs) {
    if (callable_with(self, "add", nargs, 2) < 0) return NULL;
    Py_ssize_t start = self->buf.len;
    int status = pack_into(&self->buf, args[0], 0);
    if (status != PACKED) self->buf.len = start;
    if (status == FAILED) return NULL;
    if (add_entry(self, start, status == PACKED ? NULL : args[0], args[1]) < 0) {
        self->buf.len = start;
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(keep_doc,
"keep(row, phi) -> None\n\nAdd row kept as the object, not packed (phi: its Phi).");

static PyObject *rowlog_keep(RowLog *self, PyObject *const *args, Py_ssize_t nargs) {
    if (callable_with(self, "keep", nargs, 2) < 0) return NULL;
    if (add_entry(self, self->buf.len, args[0], args[1]) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Row i as an object: unpacked from its bytes, or the object kept. */
static PyObject *row_at(RowLog *self, Py_ssize_t i) {
    Entry *entry = &self->entries[i];
    if (entry->size < 0) return Py_NewRef(entry->row);
    Reader in = {self->buf.data + entry->start, 0, entry->size};
    PyObject *row = unpack_from(&in, 0);
    if (row != NULL && in.pos != in.len) {
        Py_DECREF(row);
        return corrupt();
    }
    return row;
}

/* Row i's Phi: the double as a float, or the object given. */
static PyObject *phi_at(RowLog *self, Py_ssize_t i) {
    Entry *entry = &self->entries[i];
    return entry->phi_object != NULL ? Py_NewRef(entry->phi_object)
                                     : PyFloat_FromDouble(entry->phi);
}

/* [item(self, i) for each row i], NULL with the exception of the first failing item. */
static PyObject *each_row(RowLog *self, PyObject *(*item)(RowLog *, Py_ssize_t)) {
    PyObject *list = PyList_New(self->n);
    for (Py_ssize_t i = 0; list != NULL && i < self->n; i++) {
        PyObject *value = item(self, i);
        if (value == NULL) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, value);
    }
    return list;
}

PyDoc_STRVAR(rows_doc, "rows() -> list\n\nEvery row, in order (unpacked, or the object kept).");

static PyObject *rowlog_rows(RowLog *self, PyObject *unused) {
    (void)unused;
    return each_row(self, row_at);
}

PyDoc_STRVAR(phis_doc, "phis() -> list\n\nEach row's Phi, in order (floats, or the objects given).");

static PyObject *rowlog_phis(RowLog *self, PyObject *unused) {
    (void)unused;
    return each_row(self, phi_at);
}

PyDoc_STRVAR(phi_doubles_doc,
"phi_doubles() -> bytes or None\n\n"
"Each row's Phi as native doubles back to back, or None when some Phi is not a float: what\n"
"the OPD metrics read at an episode's end (metrics._opd.metrics), without a float object each.");

static PyObject *rowlog_phi_doubles(RowLog *self, PyObject *unused) {
    (void)unused;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        if (self->entries[i].phi_object != NULL) Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->n * (Py_ssize_t)sizeof(double));
    if (out == NULL) return NULL;
    char *raw = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < self->n; i++) {
        memcpy(raw + i * sizeof(double), &self->entries[i].phi, sizeof(double));
    }
    return out;
}

PyDoc_STRVAR(packed_doc, "packed(i) -> bytes or None\n\nRow i's bytes (None: kept as the object).");

static PyObject *rowlog_packed(RowLog *self, PyObject *index) {
    Py_ssize_t i = PyNumber_AsSsize_t(index, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= self->n) {
        PyErr_SetString(PyExc_IndexError, "RowLog index out of range");
        return NULL;
    }
    Entry *entry = &self->entries[i];
    if (entry->size < 0) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(self->buf.data + entry->start, entry->size);
}

static Py_ssize_t rowlog_len(RowLog *self) { return self->n; }

static PyObject *rowlog_nbytes(RowLog *self, void *closure) {
    (void)closure;
    return PyLong_FromSsize_t(self->buf.len);
}

static PyMethodDef rowlog_methods[] = {
    {"add_row", (PyCFunction)(void (*)(void))rowlog_add_row, METH_FASTCALL, add_row_doc},
    {"add", (PyCFunction)(void (*)(void))rowlog_add, METH_FASTCALL, add_doc},
    {"keep", (PyCFunction)(void (*)(void))rowlog_keep, METH_FASTCALL, keep_doc},
    {"rows", (PyCFunction)rowlog_rows, METH_NOARGS, rows_doc},
    {"phis", (PyCFunction)rowlog_phis, METH_NOARGS, phis_doc},
    {"phi_doubles", (PyCFunction)rowlog_phi_doubles, METH_NOARGS, phi_doubles_doc},
    {"packed", (PyCFunction)rowlog_packed, METH_O, packed_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef rowlog_getset[] = {
    {"nbytes", (getter)rowlog_nbytes, NULL, "Bytes of the packed rows.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods rowlog_sequence = {.sq_length = (lenfunc)rowlog_len};

PyDoc_STRVAR(rowlog_doc,
"RowLog(capacity=0)\n\n"
"An episode's rows, packed back to back in one buffer (capacity: bytes to start with), with\n"
"each row's Phi; a row that is not plain data is kept as its object.");

static PyTypeObject RowLogType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "simjudge.judges._rowpack.RowLog",
    .tp_basicsize = sizeof(RowLog),
    .tp_dealloc = (destructor)rowlog_dealloc,
    .tp_as_sequence = &rowlog_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = rowlog_doc,
    .tp_traverse = (traverseproc)rowlog_traverse,
    .tp_clear = (inquiry)rowlog_clear,
    .tp_methods = rowlog_methods,
    .tp_getset = rowlog_getset,
    .tp_init = (initproc)rowlog_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef methods[] = {
    {"pack", pack, METH_O, pack_doc},
    {"unpack", unpack, METH_O, unpack_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rowpack",
    "A recorder's row as one bytes object, and back (see judges/_rowpack.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__rowpack(void) {
    KEY_PROGRESS = PyUnicode_InternFromString("progress");
    KEY_SUCCESS = PyUnicode_InternFromString("success");
    KEY_STATE = PyUnicode_InternFromString("state");
    ATTR_DTYPE = PyUnicode_InternFromString("dtype");
    if (KEY_PROGRESS == NULL || KEY_SUCCESS == NULL || KEY_STATE == NULL || ATTR_DTYPE == NULL) {
        return NULL;
    }
    if (PyType_Ready(&RowLogType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "RowLog", (PyObject *)&RowLogType) < 0) Py_CLEAR(m);
    return m;
}
