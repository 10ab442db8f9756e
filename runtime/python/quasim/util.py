"""Kernel Tuner's util helpers that user scripts call, with its error
markers: a failed config's "time" is one of these (a str, as in Kernel
Tuner, so results dump as JSON)."""

import json


class ErrorConfig(str):
    def __new__(cls, *args):
        return str.__new__(cls, cls.__name__)  # so that json.dump writes the name too

    def __str__(self):
        return self.__class__.__name__

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    pass


class CompilationFailedConfig(ErrorConfig):
    pass


class RuntimeFailedConfig(ErrorConfig):
    pass


def get_config_string(params, keys=None, units=None):
    """A compact string of a result: name=value, floats to 3 decimals."""

    def compact(v):
        if isinstance(v, float):
            return "{:.3f}".format(round(v, 3))
        return str(v)

    keys = keys or params.keys()
    items = []
    for k, v in params.items():
        if k in keys:
            unit = units.get(k, "") if isinstance(units, dict) and not isinstance(v, ErrorConfig) else ""
            items.append(k + "=" + compact(v) + unit)
    return ", ".join(items)


class NpEncoder(json.JSONEncoder):
    """Writes numpy numbers and arrays as JSON does Python's."""

    def default(self, obj):
        if hasattr(obj, "tolist"):
            return obj.tolist()
        return super().default(obj)
