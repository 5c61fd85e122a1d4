// ES module entry: the same API as index.cjs.
import api from './index.cjs';

export const { check, assertNoLeak, runArgs, findBinary, checkFunction } = api;
export default api;
