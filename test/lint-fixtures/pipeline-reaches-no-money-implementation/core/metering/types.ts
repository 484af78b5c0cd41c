export interface Usage {
  input: number;
  output: number;
}
