"""The typed part of the potentials of a written data set, read back from the file with the
formula of docs/file-format.md, one region at a time (no vectorisation to share a mistake with the
writer): u_r(t) += theta[offset + t * dim + j] * x_j over the region's observation row, or
theta[offset + t] when dim = 0."""
import h5py
import numpy as np


def typed_potentials(path, theta):
    """([u_v per variable], [u_a per factor]) for the parameters `theta`."""
    with h5py.File(path, "r") as file:
        data = {name: file[name][()] for name in _datasets(file)}
    card = data["vars/card"]
    var_ptr, factor_vars = data["factors/var_ptr"], data["factors/vars"]
    table = [int(np.prod(card[factor_vars[var_ptr[a]:var_ptr[a + 1]]]))
             for a in range(var_ptr.size - 1)]
    unary = [_region(data, "var_types", data.get("vars/type"), data.get("vars/obs_row"), v,
                     card[v], theta) for v in range(card.size)]
    pairwise = [_region(data, "factor_types", data.get("factors/type"),
                        data.get("factors/obs_row"), a, table[a], theta) for a in range(len(table))]
    return unary, pairwise


def _datasets(file):
    names = []
    file.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset)
                    else None)
    return names


def _region(data, types, region_type, obs_row, r, size, theta):
    u = np.zeros(size)
    if region_type is None or region_type[r] < 0:
        return u
    offset = data[f"{types}/param_offset"][region_type[r]]
    dim = data[f"{types}/dim"][region_type[r]]
    if dim == 0:
        return u + theta[offset:offset + size]
    ptr, index = data["obs/ptr"], data["obs/index"]
    value = data.get("obs/value")
    for entry in range(ptr[obs_row[r]], ptr[obs_row[r] + 1]):
        x = 1.0 if value is None else value[entry]
        u += theta[offset + np.arange(size) * dim + index[entry]] * x
    return u
