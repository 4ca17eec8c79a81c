def s = DFNF ;
  lowerToC
