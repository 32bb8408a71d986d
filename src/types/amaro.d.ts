/** The part of amaro's API Hookgate uses (the package ships no types for it). */
declare module 'amaro' {
  const amaro: {
    transformSync(source: string, options: { mode: 'strip-only' | 'transform'; sourceMap?: boolean }): { code: string };
  };
  export default amaro;
}
