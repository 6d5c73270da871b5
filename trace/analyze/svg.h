// A hand-written SVG document builder: rectangles, lines, text. No dependencies.
#pragma once
#include <string>

namespace trace {

class Svg {
 public:
  Svg(int width, int height);
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& title = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke);
  void text(double x, double y, const std::string& content, int size = 12, const std::string& anchor = "start");
  std::string finish() const;

  static std::string escape(const std::string& text);

 private:
  std::string body_;
  int width_, height_;
};

}  // namespace trace
