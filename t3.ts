import { Demuxer, Decoder, Encoder, Muxer, FilterAPI, pipeline } from "node-av/api";
import { AV_PKT_DATA_DISPLAYMATRIX } from "node-av/constants";
async function gen(src: string, enc: string, out: string, filter?: string, opts: any = {}) {
  const t = performance.now();
  await using input = await Demuxer.open(src, { format: "lavfi" });
  const s = input.streams[0]!;
  using dec = await Decoder.create(s);
  using encoder = await Encoder.create(enc as any, { decoder: dec, ...opts });
  await using output = await Muxer.open(out);
  if (filter) {
    using f = FilterAPI.create(filter);
    const ctl = pipeline(input, dec, f, encoder, output);
    await ctl.completion;
  } else {
    const ctl = pipeline(input, dec, encoder, output);
    await ctl.completion;
  }
  console.log(out, (performance.now() - t).toFixed(0), "ms", Bun.file(out).size);
}
await gen("testsrc=duration=2:size=320x240:rate=25", "libx264", "/tmp/mx/n.mp4", "format=yuv420p", { options: { preset: "ultrafast" } });
await gen("sine=frequency=440:duration=2", "libmp3lame", "/tmp/mx/n.mp3");
