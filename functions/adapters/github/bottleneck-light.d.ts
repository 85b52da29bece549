/** Bottleneck's light build (no Redis clustering) has the types of the full one, which it ships. */
declare module 'bottleneck/light.js' {
  import Bottleneck from 'bottleneck';
  export default Bottleneck;
}
