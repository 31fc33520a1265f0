/**
 * The public API, 'manus-runtime', that plugins loaded from files import. It stands above every
 * layer, so the kernel does not import it: the program that runs the kernel provides it (the
 * bundle's entry; the test setup when the runtime runs from its source), and every plugin gets
 * that one module instance.
 */
let loadPublicApi: (() => Promise<object>) | undefined;

export function providePublicApi(load: () => Promise<object>): void {
  loadPublicApi = load;
}

export function publicApi(): Promise<object> {
  if (!loadPublicApi) return Promise.reject(new Error("plugins cannot import 'manus-runtime': no public API was provided (providePublicApi)"));
  return loadPublicApi();
}
